#!/usr/bin/env python3
"""A trainer of N ranks computes what one process computes
(docs/distributed.md): the cpu target under MPI, N = 1, 2 and 4 ranks
oversubscribed on this machine's cores.

  test_ranks.py TCC WORK

- fashion_mlp (AdamW, cosine) and ghost_cnn (ghost batch norms, whose
  groups stay within a rank, and EMA; smooth activations and average
  pools, so that no near-tie of a max turns a rounding difference into
  another gradient), and dropout_mlp (dropout: each rank draws the
  one-process run's mask bits for its slice; EMA), attention_dropout (the
  attention node's dropout of its probabilities, drawn the same way),
  sync_bn_cnn (batch
  norms over the whole batch, 2d and 1d, their statistics synchronised
  over the ranks: train.distributed.sync_batch_norm), and dropout_mlp and
  sync_bn_cnn accumulating 2 micro-batches per step (rank r's micro-batch
  k is slice r of the one-process run's micro-batch k) trained 8 steps on the
  same synthetic data from the same seed: every checkpoint tensor and metric of
  the N-rank run equal the one-process run's within
  compare_trainers.compare's bound (1e-4 of each tensor's max: the two sum
  each gradient in another order, each rank's part and then the ranks',
  a relative difference of about K * 2^-24 for K terms), the step counter
  exactly; rank 0 alone writes the metrics and the checkpoint;
- sync_bn_cnn without sync_batch_norm (each rank's own statistics, as
  DistributedDataParallel) is not the one-process run: the comparison
  fails, so the one above can;
- the gradients summed in several buckets placed in the backward
  (tcc-bucket-collectives, --bucket-size=11KiB: 3 buckets of fashion_mlp)
  and in one after it (--disable-pass=bucket-collectives) give 2-rank
  checkpoints that are the same bytes: each element is the sum of the
  same two terms, however the tensors are packed into messages;
- a checkpoint of 2 ranks resumes in one process (the same file as a
  one-process run's) and continues the same run;
- an error on one rank (rank 0's --save) ends the whole job at once;
- the world is checked: a trainer of 2 ranks started alone, a trainer of
  one rank started by mpirun -np 2, each one `error:` line and exit 1;
  --help is answered alone.
Exit 77 (skipped) where MPI is missing, as on a machine without Open MPI.
"""
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "test", "runtime", "cuda"))
import compare_trainers  # noqa: E402
import gpu_check  # noqa: E402

FAILURES = []
STEPS = 8


# The helpers of the distributed tests (test_faults.py and test_shard.py
# import them).

def check(ok, what):
    if not ok:
        FAILURES.append(what)
        print("FAIL: " + what, flush=True)
    return ok


def mpirun(n, *extra):
    cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(n),
           "-x", "OMP_NUM_THREADS=1", *extra]
    if os.geteuid() == 0:  # CI's containers run as root
        cmd.insert(1, "--allow-run-as-root")
    return cmd


def run(cmd, timeout=300):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", f"timed out after {timeout} s")


MODELS = {"fashion_mlp": os.path.join(ROOT, "examples", "fashion_mlp.json"),
          "ghost_cnn": os.path.join(ROOT, "test", "distributed", "models", "ghost_cnn.json"),
          "dropout_mlp": os.path.join(ROOT, "test", "distributed", "models", "dropout_mlp.json"),
          "sync_bn_cnn": os.path.join(ROOT, "test", "distributed", "models", "sync_bn_cnn.json"),
          "attention_dropout": os.path.join(ROOT, "test", "distributed", "models",
                                            "attention_dropout.json")}


def variant(work, model, name, **train):
    """MODELS[name]: MODELS[model] with these train fields."""
    with open(MODELS[model]) as f:
        spec = json.load(f)
    spec["train"].update(train)
    MODELS[name] = os.path.join(work, name + ".json")
    with open(MODELS[name], "w") as f:
        json.dump(spec, f)


def compile_model(tcc, model, ranks, out, *flags):
    r = run([tcc, "compile", MODELS[model],
             "--ranks=%d" % ranks, "-o", out, *flags])
    if r.returncode != 0 and "needs MPI" in r.stderr:
        print("SKIP: " + r.stderr.strip())
        sys.exit(77)
    check(r.returncode == 0, f"tcc compile {model} --ranks={ranks}: {r.stderr.strip()}")
    return r.returncode == 0


def train(exe, ranks, data, work):
    save, metrics = os.path.join(work, "state.safetensors"), os.path.join(work, "metrics.jsonl")
    os.makedirs(work, exist_ok=True)
    cmd = [exe, "--data", data, "--steps", str(STEPS), "--log-every", "2", "--seed", "3",
           "--save", save, "--metrics", metrics]
    r = run((mpirun(ranks) if ranks > 1 else []) + cmd)
    check(r.returncode == 0, f"{exe} on {ranks} ranks: exit {r.returncode}: {r.stderr[-2000:]}")
    if r.returncode != 0:
        return None
    # Rank 0 alone prints the metrics: one line per record, as one process.
    lines = [line for line in r.stdout.splitlines() if line.startswith("{")]
    records = compare_trainers.read_metrics(metrics)
    check(len(lines) == len(records), f"{exe} on {ranks} ranks printed {len(lines)} records "
          f"for the {len(records)} of its metrics file")
    return compare_trainers.read_safetensors(save), records


def prepare(work):
    """A fresh `work` with synthetic Fashion-MNIST-shaped data in it: the
    data's path, or None (the test is skipped) without Open MPI."""
    if not shutil.which("mpirun"):
        print("SKIP: no mpirun (Open MPI: apt-get install openmpi-bin libopenmpi-dev)")
        return None
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    data = os.path.join(work, "data")
    gpu_check.make_data(data, "idx", [1, 28, 28], 10, 2048, 256)
    return data


def main():
    tcc, work = sys.argv[1], sys.argv[2]
    data = prepare(work)
    if data is None:
        return 77

    variant(work, "sync_bn_cnn", "per_rank_bn_cnn", distributed={"sync_batch_norm": False})
    variant(work, "dropout_mlp", "dropout_mlp_accumulate", accumulate=2)
    # (lr 0.05 amplifies the runs' rounding differences to 3.5e-5 by step 8
    # with 128 samples a step, a thin margin below the bound; 0.02: 8e-7.)
    variant(work, "sync_bn_cnn", "sync_bn_cnn_accumulate", accumulate=2,
            optimizer={"type": "sgd", "lr": 0.02, "momentum": 0.9, "weight_decay": 0.0005})
    # (model, samples per step, rank counts)
    for model, batch, rank_counts in (("fashion_mlp", 64, (2, 4)), ("ghost_cnn", 64, (2, 4)),
                                      ("dropout_mlp", 64, (2,)), ("sync_bn_cnn", 64, (2, 4)),
                                      ("attention_dropout", 64, (2,)),
                                      ("dropout_mlp_accumulate", 128, (2,)),
                                      ("sync_bn_cnn_accumulate", 128, (2,))):
        exes = {}
        for ranks in (1,) + rank_counts:
            exes[ranks] = os.path.join(work, f"{model}-{ranks}")
            if not compile_model(tcc, model, ranks, exes[ranks]):
                return 1
        one = train(exes[1], 1, data, os.path.join(work, f"{model}-run-1"))
        for ranks in rank_counts:
            many = train(exes[ranks], ranks, data, os.path.join(work, f"{model}-run-{ranks}"))
            if one and many:
                failures, worst = compare_trainers.compare(
                    many, one, batch, STEPS, test_samples=256,
                    names=(f"{ranks} ranks", "1 rank"))
                for f in failures:
                    check(False, f"{model}: {f}")
                print(f"{model}: {ranks} ranks vs one process after {STEPS} steps: largest "
                      f"difference {worst:.2e} of a tensor's max", flush=True)

    # Bucketing the gradients changes no bit (2 ranks: a + b = b + a).
    report = os.path.join(work, "buckets.json")
    saved = {}
    for name, flags in (("buckets", ["--bucket-size=11KiB", "--report=" + report]),
                        ("one-bucket", ["--disable-pass=bucket-collectives"])):
        exe = os.path.join(work, f"fashion_mlp-2-{name}")
        if compile_model(tcc, "fashion_mlp", 2, exe, *flags):
            trained = train(exe, 2, data, os.path.join(work, f"fashion_mlp-run-2-{name}"))
            if trained:
                with open(os.path.join(work, f"fashion_mlp-run-2-{name}", "state.safetensors"),
                          "rb") as f:
                    saved[name] = f.read()
    if len(saved) == 2:
        with open(report) as f:
            buckets = json.load(f)["passes"]["bucket-collectives"]
        check(buckets["tensors"] == [2, 1, 1],
              f"fashion_mlp --bucket-size=11KiB: buckets of {buckets['tensors']} tensors, "
              "expected [2, 1, 1]")
        same = saved["buckets"] == saved["one-bucket"]
        check(same, "fashion_mlp on 2 ranks: the checkpoint with the gradients in 3 buckets "
              "differs from the one with one bucket")
        if same:
            print("fashion_mlp: 2 ranks, gradients in 3 buckets vs one: the same checkpoint, "
                  "bit for bit", flush=True)

    # Without sync_batch_norm each rank normalises its 32 samples alone: not
    # the one-process function, and the comparison says so.
    exe = os.path.join(work, "per_rank_bn_cnn-2")
    if compile_model(tcc, "per_rank_bn_cnn", 2, exe):
        synced = train(os.path.join(work, "sync_bn_cnn-1"), 1, data,
                       os.path.join(work, "sync_bn_cnn-run-1"))
        per_rank = train(exe, 2, data, os.path.join(work, "per_rank_bn_cnn-run-2"))
        if synced and per_rank:
            failures, worst = compare_trainers.compare(per_rank, synced, 64, STEPS,
                                                       test_samples=256)
            check(failures, "per-rank batch norms compared equal to the one-process run's "
                  f"(largest difference {worst:.2e}): the comparison cannot fail")
            print(f"per_rank_bn_cnn: 2 ranks without sync_batch_norm vs one process: largest "
                  f"difference {worst:.2e} of a tensor's max (a failure, as it must be)",
                  flush=True)

    # The checkpoint is the one-process run's: 4 steps on 2 ranks, then 4
    # more resumed in one process, take the 8 steps of one process (the
    # last model above: sync_bn_cnn accumulating 2 micro-batches).
    half = os.path.join(work, "resume")
    os.makedirs(half, exist_ok=True)
    first_half = os.path.join(half, "half.safetensors")
    r = run(mpirun(2) + [exes[2], "--data", data, "--steps", "4", "--seed", "3",
                         "--save", first_half])
    check(r.returncode == 0, f"4 steps on 2 ranks: {r.stderr[-1000:]}")
    resumed = os.path.join(half, "resumed.safetensors")
    r = run([exes[1], "--data", data, "--steps", "4", "--resume", first_half,
             "--save", resumed])
    check(r.returncode == 0, f"resumed in one process: {r.stderr[-1000:]}")
    if r.returncode == 0 and one:
        # The states compared (the metrics given are the one-process run's own).
        failures, worst = compare_trainers.compare(
            (compare_trainers.read_safetensors(resumed), one[1]), one, batch, STEPS,
            test_samples=256, names=("2 ranks, then 1", "1 rank"))
        for f in failures:
            check(False, f"resume across ranks: {f}")
        print(f"{model}: 4 steps on 2 ranks resumed for 4 in one process vs 8 in one: "
              f"largest difference {worst:.2e} of a tensor's max", flush=True)

    # The world must be the one the trainer was compiled for.
    r = run([exes[2], "--data", data, "--steps", "1"])
    check(r.returncode == 1 and r.stderr.count("error:") == 1 and
          "compiled for 2 ranks" in r.stderr and "mpirun -np 2" in r.stderr,
          f"a 2-rank trainer started alone: exit {r.returncode}: {r.stderr.strip()}")
    # --help is answered anywhere, a trainer of several ranks started alone too.
    r = run([exes[2], "--help"])
    check(r.returncode == 0 and "usage:" in r.stdout and not r.stderr,
          f"a 2-rank trainer's --help started alone: exit {r.returncode}: {r.stderr.strip()}")
    r = run(mpirun(2) + [exes[1], "--data", data, "--steps", "1"])
    check(r.returncode != 0 and r.stderr.count("error:") == 1 and
          "compiled for one process, but mpirun started 2" in r.stderr,
          f"a one-rank trainer under mpirun -np 2: exit {r.returncode}: {r.stderr.strip()}")
    # An error on rank 0 alone (it alone writes --save) ends every rank: the
    # others do not wait for it in a collective (a hang before).
    r = run(mpirun(2) + [exes[2], "--data", data, "--steps", "4",
                         "--save", os.path.join(work, "missing", "dir", "x.safetensors")],
            timeout=120)
    check(r.returncode not in (0, 124) and
          r.stderr.count("error: --save") == 1 and "does not exist" in r.stderr,
          f"rank 0 failing alone: exit {r.returncode}: {r.stderr.strip()[-800:]}")
    print("FAIL" if FAILURES else "PASS")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
