#!/usr/bin/env python3
"""Sharding pure 16-bit parameters (train.distributed.shard with precision
fp16 or bf16, docs/distributed.md): the chunks, their optimizer slots and
the gathers are 16-bit; the cpu target sums the reduce-scatter in f32 (each
gradient widened, this rank's chunk rounded once), as its all-reduce.

  test_shard16.py TCC WORK

- ghost_cnn (SGD with Nesterov momentum, ghost batch norms, EMA) in fp16
  and in bf16 with "optimizer" and "gradients" on 2 ranks equals "none" on
  2 bit for bit, checkpoint and metrics: two terms summed in f32 and
  rounded once whichever collective sums them, each element updated alike;
- 4 steps of fp16 "gradients" saved (the 16-bit chunks gathered into the
  one-process file) and resumed as fp16 "optimizer" (scattered from it)
  for 4 more equal 8 steps of "none" on 2 ranks, bit for bit.
Against one process the 16-bit runs differ by their rounding (each rank's
gradient is rounded to 16 bits before the ranks' sum), not only by the
order of a sum, so compare_trainers' 1e-4 bound does not apply to them.
FSDP in fp16: test_fsdp.py. Exit 77 (skipped) where MPI is missing.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_ranks as t  # noqa: E402  (the same helpers: mpirun, compile, train)
from test_shard import check_same_resume, same_bits  # noqa: E402


def main():
    tcc, work = sys.argv[1], sys.argv[2]
    data = t.prepare(work)
    if data is None:
        return 77
    runs, exes = {}, {}
    for precision in ("fp16", "bf16"):
        for shard in ("none", "optimizer", "gradients"):
            name = f"{precision}_{shard}"
            t.variant(work, "ghost_cnn", name, precision=precision, distributed={"shard": shard})
            exes[name, 2] = os.path.join(work, f"{name}-2")
            if not t.compile_model(tcc, name, 2, exes[name, 2]):
                return 1
            runs[name, 2] = t.train(exes[name, 2], 2, data, os.path.join(work, f"run-{name}"))
        for shard in ("optimizer", "gradients"):
            same_bits(runs[f"{precision}_{shard}", 2], runs[f"{precision}_none", 2],
                      f"{precision}_{shard} on 2 ranks", f"{precision}_none on 2 ranks")
    check_same_resume(exes, data, os.path.join(work, "resume"), runs["fp16_none", 2],
                      ("fp16_gradients", 2), ("fp16_optimizer", 2))
    print("FAIL" if t.FAILURES else "PASS")
    return 1 if t.FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
