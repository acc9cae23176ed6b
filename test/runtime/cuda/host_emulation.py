#!/usr/bin/env python3
"""The cuda target's generated step, run on the CPU under host emulation,
trains like the cpu trainer.

CI has no GPU. runtime/cuda/device/HostEmulation.h lets the .cu file that
`tcc compile --target=cuda --emit=source` writes compile as plain C++ and run
on the host with CUDA's stream and graph semantics (the training step is
recorded once and replayed, as on a GPU). This test builds that trainer and
the cpu trainer of the same model, trains both for --steps steps from the
same seed on the same data, and compares them as compare_trainers.py says
(the GPU check's comparison: every checkpoint tensor within 1e-4 of its max,
the metrics the trainer read from the step's totals within rounding; the
emulated matmuls and convolutions sum in double). With --precision
bf16-mixed, fp16-mixed, bf16 or fp16 both train the 16-bit step (the emulated cuda one
runs its convolutions and linear layers on 16-bit tensors, rounding each
result once, where the cpu one runs them on f32 copies), and each is
measured against the cpu trainer's f32 step (compare_trainers.compare_mixed);
likewise for a model whose own precision is 16-bit.
With --inject-fault the emulated cuda trainer is also built with one
deliberately wrong kernel (-DTCC_INJECT_FAULT, FaultInjection.cuh, in that
build only): the test passes only if the healthy trainer passes the
comparison and the faulty one fails it, so the comparison is shown to catch
a kernel wrong by one rounding's size.
What it checks: the cuda emitter's calls, the order of the launches, the
batch gather, the graph capture and replay, the constants in device memory,
and the trainer's device paths (uploads, totals read at log points; with
--shard parameters, each evaluation's whole state gathered in device memory). What it
does not: GPU rounding and concurrency (scripts/gpu-check.sh on a GPU).
"""

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import compare_trainers
import token_data

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "trainer"))
import check_profile  # noqa: E402  (test/trainer/check_profile.py)


def run(cmd, cwd, what, env=None):
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"FAIL: {what} exited with {result.returncode}:\n{result.stdout}{result.stderr}")
    return result


def check_fallback_warnings(stderr, text):
    """With TCC_TEST_MATMUL_NO_ALGO=text: one warning line per distinct
    matmul whose key contains text, at least one. True on failure."""
    pattern = re.compile(r"warning: cuBLASLt has no algorithm for the matmul \[([^\]]*)\]: "
                         r"a simple tiled kernel runs it instead, slower than cuBLASLt$")
    keys = [m.group(1) for m in map(pattern.match, stderr.splitlines()) if m]
    wrong = [k for k in keys if text not in k]
    if not keys or wrong or len(set(keys)) != len(keys):
        print("FAIL: with TCC_TEST_MATMUL_NO_ALGO=%s the cuda trainer must warn once for each "
              "matmul whose key contains it; its stderr:\n%s" % (text, stderr))
        return True
    print("the fallback kernel ran %d matmuls, one warning each: %s" % (len(keys), "; ".join(keys)))
    return False


def check_eval_gathers(stderr, ranks):
    """With TCC_TEST_TRACE_EVAL_GATHER: every rank gathered each
    evaluation's whole state in the model's (emulated) device memory
    (CudaModel::gatherWholeState), none through the host. True on failure."""
    pattern = re.compile(r"trace: rank (\d+) gathered the evaluation's whole state (.*) "
                         r"\(\d+ bytes\)$")
    traced = [m.groups() for m in map(pattern.match, stderr.splitlines()) if m]
    counts = [sum(1 for r, _ in traced if int(r) == rank) for rank in range(ranks)]
    where = sorted(set(w for _, w in traced))
    if not counts[0] or len(set(counts)) != 1 or where != ["in the model's device memory"]:
        print("FAIL: the emulated cuda trainer must gather each evaluation's whole state in "
              "its device memory on every rank; it traced %s per rank, %s; its stderr:\n%s"
              % (counts, where, stderr))
        return True
    print("each rank gathered the evaluation's whole state %d times in the model's device "
          "memory (none through the host)" % counts[0])
    return False


def read_idx(directory, name):
    """An IDX file of the Fashion-MNIST directory (gzip or plain) as numpy."""
    path = os.path.join(directory, name)
    opener = gzip.open if os.path.exists(path + ".gz") else open
    with opener(path + ".gz" if opener is gzip.open else path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(raw, np.uint8, offset=4 + 4 * dims).reshape(shape)


def with_first_samples(spec, tmp, n_train, n_test):
    """`spec` training on the first n_train images of its Fashion-MNIST idx
    files (all of them for None) and evaluating on the first n_test test
    images, written as npy files in tmp."""
    directory = spec["data"]["path"]
    out = os.path.join(tmp, "data")
    os.makedirs(out)
    for split, prefix, n in (("train", "train", n_train), ("test", "t10k", n_test)):
        x = read_idx(directory, prefix + "-images-idx3-ubyte")[:n]
        y = read_idx(directory, prefix + "-labels-idx1-ubyte")[:n].astype(np.int64)
        np.save(os.path.join(out, split + "_x.npy"), x.reshape(x.shape[0], 1, 28, 28))
        np.save(os.path.join(out, split + "_y.npy"), y)
    spec["data"] = dict(spec["data"], format="npy", path=out)


def with_token_data(spec, tmp, n_train, n_test):
    """`spec` (a token model with sequence targets) training on n_train
    synthetic sequences and evaluating on n_test (token_data.py), written as
    npy files in tmp."""
    out = os.path.join(tmp, "data")
    token_data.write_token_data(out, spec["input"]["shape"][0], spec["input"]["vocab"],
                                spec["loss"].get("ignore_index", -100), n_train, n_test)
    spec["data"] = dict(spec["data"], format="npy", path=out)


# --inject-fault's names: TCC_INJECT_FAULT's values (FaultInjection.cuh).
FAULTS = {"bn-dx-ulp": 1, "bias-grad-drop-last": 2, "bn-backward-sums-drop-last": 3}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--tcc", required=True)
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--root", required=True, help="the source tree (runtime headers)")
    ap.add_argument("--libs", required=True,
                    help="the trainer's runtime libraries, ';'-separated, the host "
                    "emulation's first (build/test/runtime/cuda/libTccCudaHostEmulation.a)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--precision", choices=["bf16-mixed", "fp16-mixed", "bf16", "fp16"],
                    help="train this 16-bit step (default: the model's own precision)")
    ap.add_argument("--disable-pass", action="append", default=[],
                    help="leave out an optimization pass in every trainer (repeatable)")
    ap.add_argument("--enable-pass", action="append", default=[],
                    help="add an optimization pass that is off by default to the cuda "
                         "trainer's compile (repeatable)")
    ap.add_argument("--train-samples", type=int,
                    help="train on the first that many images of the model's Fashion-MNIST "
                         "idx files (so that --steps crosses epochs)")
    ap.add_argument("--profile", action="store_true",
                    help="also run the emulated cuda trainer with --profile: its steps, run "
                         "one by one instead of replayed from the graph, must give the same "
                         "checkpoint bit for bit, and its profile the report's kernels "
                         "and collectives (test/trainer/check_profile.py)")
    ap.add_argument("--expect-group", action="append", default=[],
                    help="a kind of fusion group the cuda step must have: what the test is "
                         "of (repeatable)")
    ap.add_argument("--expect-pass", action="append", default=[], metavar="PASS.KEY=N",
                    help="a number in the cuda compile's --report (passes.PASS.KEY) must be N: "
                         "that the pass the test is of fired (repeatable)")
    ap.add_argument("--expect-frozen-step", action="store_true",
                    help="the model has train_epochs: the cuda step must have its second "
                         "training step (tcc-frozen-step, its own graph), which the run must "
                         "pass into, and the cpu reference is the one-step trainer "
                         "(--disable-pass=frozen-step)")
    ap.add_argument("--inject-fault", choices=sorted(FAULTS),
                    help="also build the emulated cuda trainer with this deliberately wrong "
                         "kernel (runtime/cuda/device/FaultInjection.cuh): the test passes "
                         "only if the healthy trainer passes the comparison and the faulty "
                         "one fails it")
    ap.add_argument("--tuning-db", help="the cuda step's tuning file (tcc compile --tuning-db, "
                    "--gpu=h100): its CUTLASS kernels are compiled out and emulated")
    ap.add_argument("--expect-cutlass", type=int, metavar="N",
                    help="the step's table must give N convolutions CUTLASS kernels")
    ap.add_argument("--verbose", action="store_true",
                    help="print the distances of every tensor also when the comparison passes")
    ap.add_argument("--save-runs", help="copy the runs' checkpoints and metrics to this folder")
    ap.add_argument("--ranks", type=int, default=1,
                    help="compile the cuda step for this many ranks and run the emulated "
                         "trainer under mpirun, its collectives through MPI "
                         "(Collectives.cuh); the cpu trainer stays one process")
    ap.add_argument("--mpi-libs", default="",
                    help="with --ranks: the MPI communicator's libraries, ';'-separated, "
                         "in place of the one-process one")
    ap.add_argument("--bucket-size",
                    help="with --ranks: the cuda step's gradient buckets (tcc compile "
                         "--bucket-size; the cpu trainer, one process, has none)")
    ap.add_argument("--expect-side-stream", type=int,
                    help="the cuda step must run this many buckets on its side stream "
                         "(tcc-cuda-overlap-buckets): what the test is of")
    ap.add_argument("--same-without",
                    help="also build the cuda step with this optimization pass left out: "
                         "its checkpoint must equal the step's bit for bit (the pass is "
                         "exact under emulation: tcc-cuda-overlap-buckets)")
    ap.add_argument("--eval-both", action="store_true",
                    help="every trainer evaluates the EMA and the raw weights (--eval both): "
                         "both test losses and accuracies are compared")
    ap.add_argument("--epochs", type=int,
                    help="train.epochs in place of the model's (with --train-samples: so that "
                         "--steps crosses evaluations)")
    ap.add_argument("--shard", choices=["optimizer", "gradients", "parameters"],
                    help="with --ranks: train.distributed.shard of the cuda step (the cpu "
                         "trainer, one process, has nothing to shard)")
    ap.add_argument("--resume-at", type=int,
                    help="also train the emulated cuda trainer this many steps, save, and "
                         "resume it for the rest of --steps: its checkpoint must equal the "
                         "uninterrupted run's bit for bit (a sharded state is saved whole "
                         "and each rank keeps its chunks of it)")
    ap.add_argument("--no-algo", metavar="TEXT",
                    help="the emulated cuda trainer runs with TCC_TEST_MATMUL_NO_ALGO=TEXT: "
                         "the matmuls whose problem key contains TEXT run the fallback kernel "
                         "(MatmulFallback.cuh) as when cuBLASLt has no algorithm; its stderr "
                         "must warn once for each, and for no other")
    args = ap.parse_args()
    with open(args.model) as f:
        spec = json.load(f)
    if args.epochs:
        spec["train"]["epochs"] = args.epochs
    if args.shard:
        spec["train"].setdefault("distributed", {})["shard"] = args.shard
    precision_name = args.precision or spec["train"].get("precision", "fp32")
    sixteen_bit = precision_name != "fp32"
    precision = ["--precision=" + args.precision] if args.precision else []
    passes = ["--disable-pass=" + name for name in args.disable_pass]
    enabled = ["--enable-pass=" + name for name in args.enable_pass]
    args.model = os.path.abspath(args.model)

    tmp = tempfile.mkdtemp(prefix="tcc-cuda-emu-")
    try:
        # The first 1000 test images (a partial last batch for the batch
        # sizes here): the evaluation on the emulated device, serial sums in
        # double, is most of a run's time. With --train-samples, few
        # training images so that a run of few steps crosses epochs, and 2
        # batches of test images.
        test_samples = 2 * int(spec["train"]["batch_size"]) if args.train_samples else 1000
        if spec["input"].get("type") == "tokens":
            # A short last test batch, padded with ignore_index targets.
            test_samples = 4 * int(spec["train"]["batch_size"]) + 3
            with_token_data(spec, tmp, args.train_samples or 512, test_samples)
        else:
            with_first_samples(spec, tmp, args.train_samples, test_samples)
        args.model = os.path.join(tmp, "model.json")
        with open(args.model, "w") as f:
            json.dump(spec, f)
        source = os.path.join(tmp, "model.cu")
        report = os.path.join(tmp, "cuda-report.json")
        ranks = ["--ranks=%d" % args.ranks] if args.ranks > 1 else []
        if args.bucket_size:
            ranks.append("--bucket-size=" + args.bucket_size)
        tuned = ["--gpu=h100", "--tuning-db=" + os.path.abspath(args.tuning_db)] \
            if args.tuning_db else []
        run([args.tcc, "compile", args.model, "--target=cuda", "--emit=source", "-o", source,
             "--report", report, *precision, *passes, *enabled, *ranks, *tuned], tmp,
            "tcc compile --target=cuda --emit=source")
        if args.expect_cutlass is not None:
            with open(source) as f:
                kernels = f.read().count("tcc::cuda::cutlass_conv::Kernel<")
            if kernels != args.expect_cutlass:
                print("FAIL: the cuda step gives %d convolutions CUTLASS kernels, expected %d"
                      % (kernels, args.expect_cutlass))
                return 1
        with open(report) as f:
            cuda_report = json.load(f)
        if args.expect_side_stream is not None:
            side = cuda_report["passes"].get("cuda-overlap-buckets", {}).get("side_stream", 0)
            if side != args.expect_side_stream:
                print("FAIL: the cuda step runs %d buckets on its side stream, expected %d"
                      % (side, args.expect_side_stream))
                return 1
        kinds = cuda_report["passes"].get("fusion", {}).get("groups_by_kind", {})
        cpu_passes = list(passes)
        if args.expect_frozen_step:
            steps = cuda_report.get("train_steps", [])
            frozen = [s for s in steps if s["name"] == "train_step_frozen"]
            if len(steps) != 2 or not frozen or not frozen[0]["leaves_out"]:
                print("FAIL: the cuda step has no second training step: " + json.dumps(steps))
                return 1
            per_epoch = (args.train_samples or 0) // int(spec["train"]["batch_size"])
            if not per_epoch or frozen[0]["from_epoch"] * per_epoch >= args.steps:
                print("FAIL: --steps %d with --train-samples %s does not reach the switch"
                      % (args.steps, args.train_samples))
                return 1
            print("the cuda trainer runs @train_step_frozen from epoch %d on, without %s"
                  % (frozen[0]["from_epoch"], ", ".join(frozen[0]["leaves_out"])))
            cpu_passes.append("--disable-pass=frozen-step")
        for expected in args.expect_pass:
            path, want = expected.split("=")
            name, key = path.rsplit(".", 1)
            got = cuda_report["passes"].get(name, {}).get(key)
            if got != int(want):
                print("FAIL: the cuda compile's report has passes.%s = %s, not %s"
                      % (path, got, want))
                return 1
        missing = [kind for kind in args.expect_group if not kinds.get(kind)]
        if missing:
            print("FAIL: the cuda step has no " + ", ".join(missing) + " group (it has " +
                  json.dumps(kinds) + ")")
            return 1
        libs = args.libs.split(";")
        launch = []
        if args.ranks > 1:
            if not args.mpi_libs or not shutil.which("mpirun"):
                print("SKIP: --ranks needs MPI (Open MPI: scripts/setup.sh)")
                return 77
            # The MPI communicator in place of the one-process one.
            libs = [lib for lib in libs if not lib.endswith("libTccComm.a")]
            libs += args.mpi_libs.split(";")
            launch = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(args.ranks),
                      "-x", "OMP_NUM_THREADS=1"]
            if os.geteuid() == 0:  # CI's containers run as root
                launch.insert(1, "--allow-run-as-root")

        def build_emulated(exe, defines=(), source=source):
            # The host side (CudaMemory.cpp, ConvRunnerEmulated.cpp) is
            # libTccCudaHostEmulation.a in --libs, built once by CMake.
            run([args.cxx, "-std=c++17", "-O2", "-fopenmp", "-DTCC_CUDA_HOST_EMULATION",
                 *defines, "-I" + args.root, "-x", "c++", source, "-x", "none",
                 *libs, "-lz", "-o", exe], tmp,
                "building the emulated cuda trainer" + (" with " + " ".join(defines)
                                                        if defines else ""))

        emulated = os.path.join(tmp, "train-cuda-emulated")
        build_emulated(emulated)
        trainers = [("cuda", emulated)]
        if args.inject_fault:
            # The same step with one wrong kernel: the define reaches only
            # this build (FaultInjection.cuh).
            faulty = os.path.join(tmp, "train-cuda-faulty")
            build_emulated(faulty, ["-DTCC_INJECT_FAULT=%d" % FAULTS[args.inject_fault]])
            trainers.append(("cuda-faulty", faulty))
        f32 = [("cpu-f32", ["--precision=fp32"])] if sixteen_bit else []
        for name, extra in [("cpu", precision)] + f32:
            exe = os.path.join(tmp, "train-" + name)
            # The reference is one process, whatever the model's ranks.
            one = ["--ranks=1"] if args.ranks > 1 else []
            run([args.tcc, "compile", args.model, "--target=cpu", "-o", exe, *extra, *cpu_passes,
                 *one],
                tmp,
                "tcc compile --target=cpu " + " ".join(extra))
            trainers.append((name, exe))

        results = {}
        for name, exe in trainers:
            on_cpu = name == "cpu" or name.startswith("cpu-")
            env = None
            if args.no_algo and not on_cpu:
                env = dict(os.environ, TCC_TEST_MATMUL_NO_ALGO=args.no_algo)
            traced = args.shard == "parameters" and name == "cuda"
            if traced:
                env = dict(env or os.environ, TCC_TEST_TRACE_EVAL_GATHER="1")
            result = run(([] if on_cpu else launch) +
                         (["-x", "TCC_TEST_TRACE_EVAL_GATHER"] if traced else []) +
                         [exe, "--steps", str(args.steps), "--log-every", str(args.steps // 2),
                          "--save", name + ".safetensors", "--metrics", name + ".jsonl",
                          "--quiet", *(["--eval", "both"] if args.eval_both else [])],
                         tmp, f"the {name} trainer", env)
            if args.no_algo and not on_cpu and check_fallback_warnings(result.stderr, args.no_algo):
                return 1
            if traced and check_eval_gathers(result.stderr, args.ranks):
                return 1
            state = compare_trainers.read_safetensors(os.path.join(tmp, name + ".safetensors"))
            results[name] = (state,
                             compare_trainers.read_metrics(os.path.join(tmp, name + ".jsonl")))
            if args.save_runs:
                os.makedirs(args.save_runs, exist_ok=True)
                for suffix in (".safetensors", ".jsonl"):
                    shutil.copy(os.path.join(tmp, name + suffix), args.save_runs)

        if args.resume_at:
            # The same steps in two runs: the second resumes the first's
            # checkpoint (on every rank) and trains the rest.
            run(launch + [emulated, "--steps", str(args.resume_at), "--save", "first.safetensors",
                          "--quiet"], tmp, "the cuda trainer's first part")
            run(launch + [emulated, "--steps", str(args.steps - args.resume_at), "--resume",
                          "first.safetensors", "--save", "resumed.safetensors", "--quiet"],
                tmp, "the resumed cuda trainer")
            resumed = compare_trainers.read_safetensors(os.path.join(tmp, "resumed.safetensors"))
            whole = results["cuda"][0]
            differ = sorted(k for k in set(whole) | set(resumed)
                            if k not in whole or k not in resumed or
                            whole[k].shape != resumed[k].shape or (whole[k] != resumed[k]).any())
            if differ:
                print("FAIL: %d steps, saved and resumed for %d more, differ from %d steps in "
                      "one run: %s" % (args.resume_at, args.steps - args.resume_at, args.steps,
                                       ", ".join(differ)))
                return 1
            print("PASS: %d steps of the cuda trainer, saved and resumed for %d more, equal %d "
                  "steps in one run bit for bit" % (args.resume_at, args.steps - args.resume_at,
                                                    args.steps))

        if args.same_without:
            without = os.path.join(tmp, "model-without.cu")
            run([args.tcc, "compile", args.model, "--target=cuda", "--emit=source", "-o",
                 without, *precision, *passes, "--disable-pass=" + args.same_without, *ranks],
                tmp, "tcc compile --target=cuda --disable-pass=" + args.same_without)
            with open(source) as a, open(without) as b:
                if a.read() == b.read():
                    print("FAIL: --disable-pass=%s changes nothing in the cuda step"
                          % args.same_without)
                    return 1
            exe = os.path.join(tmp, "train-cuda-without")
            build_emulated(exe, source=without)
            run(launch + [exe, "--steps", str(args.steps), "--save", "without.safetensors",
                          "--quiet", *(["--eval", "both"] if args.eval_both else [])],
                tmp, "the cuda trainer without " + args.same_without)
            with open(os.path.join(tmp, "cuda.safetensors"), "rb") as a, \
                    open(os.path.join(tmp, "without.safetensors"), "rb") as b:
                if a.read() != b.read():
                    print("FAIL: the cuda step without %s trains otherwise" % args.same_without)
                    return 1
            print("PASS: the cuda step without %s trains the same bit for bit"
                  % args.same_without)

        if args.profile:
            run(launch + [emulated, "--steps", str(args.steps), "--save", "profiled.safetensors",
                 "--profile", "profile.json", "--quiet"], tmp, "the profiled cuda trainer")
            with open(os.path.join(tmp, "cuda.safetensors"), "rb") as a, \
                    open(os.path.join(tmp, "profiled.safetensors"), "rb") as b:
                if a.read() != b.read():
                    print("FAIL: the profiled cuda trainer's checkpoint differs from the "
                          "graph-replayed one's")
                    return 1
            with open(os.path.join(tmp, "profile.json")) as f, open(report) as r:
                # Its communication too: with --expect-side-stream, that many
                # buckets timed on the side stream.
                failures = check_profile.check(json.load(f), json.load(r), args.steps - 1,
                                               side_stream=args.expect_side_stream)
            if failures:
                print("FAIL: the profile of the cuda trainer: " + "; ".join(failures))
                return 1
            print("PASS: the profiled cuda trainer computes the same step, and its profile "
                  "times every kernel and collective")

        def check(cuda):
            """The comparison of the emulated trainer `cuda` with the cpu
            trainer: (failures, the line that says how close, its table)."""
            if sixteen_bit:
                failures, summary = compare_trainers.compare_mixed(
                    results[cuda], results["cpu"], results["cpu-f32"], precision_name,
                    test_samples=test_samples)
                w = summary["whole"]
                return failures, (
                    f"after {args.steps} 16-bit steps the emulated cuda trainer's "
                    f"{len(results['cpu'][0])} tensors are {summary['ratio']:.2f} times as far "
                    f"from the f32 step as the cpu trainer's (|cuda - f32| {w['a_32']:.3g}, "
                    f"|cpu16 - f32| {w['16_32']:.3g}; every tensor and the evaluation within "
                    f"2 times plus one rounding), and {w['a_16']:.3g} from the cpu trainer's "
                    f"(at most {summary['implementations_bound']:.3g})"), \
                    compare_trainers.distance_table(summary)
            failures, worst = compare_trainers.compare(results[cuda], results["cpu"],
                                                       spec["train"]["batch_size"], args.steps,
                                                       test_samples)
            return failures, (f"{len(results['cpu'][0])} tensors and {len(results['cpu'][1])} "
                              f"metrics records agree after {args.steps} steps (largest "
                              f"difference: {worst:.2g} of a tensor's max)"), []

        failures, line, table = check("cuda")
        if failures or args.verbose:
            print("\n".join(table))
        if failures:
            print("FAIL: the emulated cuda trainer differs from the cpu trainer:")
            for f in failures:
                print("  " + f)
            return 1
        print("PASS: " + line)
        if args.inject_fault:
            failures, line, table = check("cuda-faulty")
            print("\n".join(table))
            if not failures:
                print(f"FAIL: with the injected fault {args.inject_fault} the emulated cuda "
                      "trainer still passes the comparison: " + line)
                return 1
            print(f"PASS: with the injected fault {args.inject_fault} the comparison fails:")
            for f in failures:
                print("  " + f)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
