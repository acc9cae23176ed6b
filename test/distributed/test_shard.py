#!/usr/bin/env python3
"""Sharded optimizer state (train.distributed.shard, docs/distributed.md): each
rank keeps 1/N of the optimizer moments ("optimizer", ZeRO-1) and receives
only its chunk of the summed gradients ("gradients", ZeRO-2), and the ranks
gather the updated parameters; checkpoints hold the state whole.

  test_shard.py TCC WORK

- fashion_mlp (AdamW) sharded both ways on 2 and 4 ranks, and ghost_cnn
  (SGD with Nesterov momentum, ghost batch norms, EMA) with "gradients" on 2,
  trained 8 steps: every checkpoint tensor and metric equal the one-process
  run's within compare_trainers.compare's bound (the gradients summed in
  another order);
- "optimizer" is "none" bit for bit on the same ranks: the same all-reduce,
  then each element's update computed by one rank instead of all;
- "gradients" on 2 ranks with its reduce-scatter in 3 buckets placed in the
  backward (tcc-bucket-collectives, --bucket-size=11KiB) is "none" on 2
  ranks (one all-reduce) bit for bit: each chunk element is the sum of the
  same two terms, however the tensors are packed;
- the report's optimizer state per rank is each slot's chunk,
  ceil(n / N) values per parameter tensor, and says which collectives move
  how much;
- a checkpoint of 4 ranks sharded resumes in one process, and one of one
  process resumes on 2 ranks sharded: both continue the one-process run.
Pure 16-bit parameters: test_shard16.py.
Exit 77 (skipped) where MPI is missing.
"""
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_ranks as t  # noqa: E402  (the same helpers: mpirun, compile, train)
from test_ranks import check, compare_trainers, run  # noqa: E402

STEPS = t.STEPS


def compare(a, b, what, batch=64):
    if a and b:
        failures, worst = compare_trainers.compare(a, b, batch, STEPS, test_samples=256,
                                                   names=(what, "1 rank"))
        for f in failures:
            check(False, f"{what}: {f}")
        print(f"{what} vs one process after {STEPS} steps: largest difference {worst:.2e} "
              "of a tensor's max", flush=True)


def report(tcc, model, ranks, work):
    path = os.path.join(work, f"{model}-{ranks}.report.json")
    r = run([tcc, "compile", t.MODELS[model], f"--ranks={ranks}", "--emit=planned-mlir",
             "-o", os.devnull, "--report", path])
    check(r.returncode == 0, f"--report of {model}: {r.stderr.strip()}")
    with open(path) as f:
        return json.load(f)["distributed"]


def check_resumes(exes, data, folder, base, cases):
    """Each case (first, then, name): 4 steps of the trainer `first` (model,
    ranks) saved, resumed as `then` for 4 more, must equal `base`, 8 steps of
    one process."""
    os.makedirs(folder)
    for first, then, name in cases:
        saved = os.path.join(folder, f"{first[0]}-{first[1]}.safetensors")
        r = run((t.mpirun(first[1]) if first[1] > 1 else []) +
                [exes[first], "--data", data, "--steps", "4", "--seed", "3", "--save", saved])
        check(r.returncode == 0, f"4 steps of {first}: {r.stderr[-1000:]}")
        resumed = os.path.join(folder, f"{name.replace(' ', '_')}.safetensors")
        r = run((t.mpirun(then[1]) if then[1] > 1 else []) +
                [exes[then], "--data", data, "--steps", "4", "--resume", saved,
                 "--save", resumed])
        check(r.returncode == 0, f"resumed as {then}: {r.stderr[-1000:]}")
        if r.returncode == 0 and base:
            compare((compare_trainers.read_safetensors(resumed), base[1]), base, name)


def untimed(records):
    """The metrics records without their clocks (elapsed_s, epoch_seconds, ...)."""
    return [{k: v for k, v in r.items() if not (k.endswith("_s") or "second" in k)}
            for r in records or []]


def same_bits(a, b, what, other):
    """Checkpoint tensors and metrics of runs `a` and `b` the same bits."""
    if a and b:
        same = sorted(a[0]) == sorted(b[0]) and all(
            a[0][k].shape == b[0][k].shape and (a[0][k] == b[0][k]).all() for k in a[0])
        same = same and untimed(a[1]) == untimed(b[1])
        check(same, f"{what} is not {other} bit for bit")
        if same:
            print(f"{what} equals {other} bit for bit", flush=True)


def check_zero2_buckets(path):
    """The report of zero2_mlp at --bucket-size=11KiB: its reduce-scatter in
    the 3 buckets "none"'s all-reduce takes (distributed.ranks)."""
    with open(path) as f:
        report = json.load(f)
    tensors = report["passes"].get("bucket-collectives", {}).get("tensors")
    scatters = report["distributed"]["reduce_scatter"]["collectives"]
    listed = [b["tensors"] for b in report["distributed"]["gradient_buckets"]]
    check(tensors == [2, 1, 1] and scatters == 3 and listed == tensors,
          f"zero2_mlp --bucket-size=11KiB: buckets of {tensors} tensors, {scatters} "
          f"reduce-scatters, gradient_buckets {listed}; expected [2, 1, 1] in 3")


def check_same_resume(exes, data, folder, base, first, then):
    """4 steps of `first` saved, 4 more of `then` resumed: bit for bit
    `base`, 8 steps of a run that sums as both do."""
    os.makedirs(folder)
    saved, resumed = os.path.join(folder, "first.safetensors"), os.path.join(folder, "then.safetensors")
    r = run(t.mpirun(first[1]) + [exes[first], "--data", data, "--steps", "4", "--seed", "3",
                                  "--save", saved])
    check(r.returncode == 0, f"4 steps of {first}: {r.stderr[-1000:]}")
    r = run(t.mpirun(then[1]) + [exes[then], "--data", data, "--steps", "4", "--resume", saved,
                                 "--save", resumed])
    check(r.returncode == 0, f"resumed as {then}: {r.stderr[-1000:]}")
    if r.returncode == 0 and base:
        got = compare_trainers.read_safetensors(resumed)
        same_bits((got, None), (base[0], None), f"{first[0]} resumed as {then[0]}",
                  "8 steps without a stop")


def main():
    tcc, work = sys.argv[1], sys.argv[2]
    data = t.prepare(work)
    if data is None:
        return 77
    t.variant(work, "fashion_mlp", "zero1_mlp", distributed={"shard": "optimizer"})
    t.variant(work, "fashion_mlp", "zero2_mlp", distributed={"shard": "gradients"})
    t.variant(work, "ghost_cnn", "zero2_cnn", distributed={"shard": "gradients"})

    buckets = os.path.join(work, "zero2-buckets.json")
    flags = {("zero2_mlp", 2): ["--bucket-size=11KiB", "--report=" + buckets]}
    exes = {}
    for model, ranks in (("fashion_mlp", 1), ("fashion_mlp", 2), ("ghost_cnn", 1),
                         ("zero1_mlp", 2), ("zero1_mlp", 4), ("zero2_mlp", 2),
                         ("zero2_mlp", 4), ("zero2_cnn", 2)):
        exes[model, ranks] = os.path.join(work, f"{model}-{ranks}")
        if not t.compile_model(tcc, model, ranks, exes[model, ranks],
                               *flags.get((model, ranks), [])):
            return 1
    check_zero2_buckets(buckets)
    runs = {key: t.train(exe, key[1], data, os.path.join(work, f"run-{key[0]}-{key[1]}"))
            for key, exe in exes.items()}
    for model, ranks in (("zero1_mlp", 2), ("zero1_mlp", 4), ("zero2_mlp", 2),
                         ("zero2_mlp", 4)):
        compare(runs[model, ranks], runs["fashion_mlp", 1], f"{model} on {ranks} ranks")
    compare(runs["zero2_cnn", 2], runs["ghost_cnn", 1], "zero2_cnn on 2 ranks")

    # ZeRO-1 reduces as "none" does; each element's update is the same.
    if runs["zero1_mlp", 2] and runs["fashion_mlp", 2]:
        a, b = runs["zero1_mlp", 2][0], runs["fashion_mlp", 2][0]
        same = sorted(a) == sorted(b) and all(
            a[k].shape == b[k].shape and (a[k] == b[k]).all() for k in a)
        check(same, "shard \"optimizer\" on 2 ranks is not \"none\" on 2 ranks bit for bit")
        if same:
            print("zero1_mlp on 2 ranks equals fashion_mlp on 2 ranks bit for bit", flush=True)
    # ZeRO-2 in 3 buckets sums the same two terms per element as one all-reduce.
    same_bits(runs["zero2_mlp", 2], runs["fashion_mlp", 2],
              "zero2_mlp on 2 ranks in 3 reduce-scatter buckets", "fashion_mlp on 2 ranks")

    # Each rank keeps ceil(n / N) of each of AdamW's two moments per tensor.
    sizes = [784 * 256, 256, 256 * 10, 10]  # fashion_mlp's trainable tensors
    with open(t.MODELS["fashion_mlp"]) as f:
        layers = [n for n in json.load(f)["graph"] if n["op"] == "linear"]
    check(len(layers) == 2 and layers[0]["out_features"] == 256,
          "fashion_mlp is no longer 784-256-10: update the sizes here")
    for model, ranks, shard in (("fashion_mlp", 4, "none"), ("zero1_mlp", 4, "optimizer"),
                                ("zero2_mlp", 4, "gradients")):
        d = report(tcc, model, ranks, work)
        chunks = sizes if shard == "none" else [math.ceil(n / ranks) for n in sizes]
        expected = 2 * 4 * sum(chunks)
        check(d["shard"] == shard and d["optimizer_state_bytes_per_rank"] == expected,
              f"{model} on {ranks} ranks: the report says {d}, expected shard {shard} and "
              f"{expected} bytes of optimizer state per rank")
        grads = 4 * sum(sizes)
        moved = {"none": ("all_reduce", "all_reduce"), "optimizer": ("all_reduce", "all_gather"),
                 "gradients": ("reduce_scatter", "all_gather")}[shard]
        for kind in moved:
            check(d[kind]["bytes_per_step"] == grads,
                  f"{model}: {kind} moves {d[kind]['bytes_per_step']} bytes, expected {grads}")
        print(f"{model} on {ranks} ranks: {d['optimizer_state_bytes_per_rank']} bytes of "
              f"optimizer state per rank, as expected", flush=True)

    # Checkpoints hold the state whole: sharded -> one process, and back.
    check_resumes(exes, data, os.path.join(work, "resume"), runs["fashion_mlp", 1],
                  ((("zero2_mlp", 4), ("fashion_mlp", 1), "4 ranks sharded, then 1"),
                   (("fashion_mlp", 1), ("zero1_mlp", 2), "1 rank, then 2 sharded")))
    print("FAIL" if t.FAILURES else "PASS")
    return 1 if t.FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
