#!/usr/bin/env python3
"""The cuda trainers on a real GPU, checked against the cpu trainers.

Three steps, because the GPU machines have CUDA, CMake and Python with
NumPy but no MLIR, and their time is scarce (docs/cuda.md, "Checking on a GPU"):

  scripts/gpu-check.sh prepare DIR [--gpu h100]   # here, with tcc built
  scripts/gpu-check.sh build DIR                  # here (optional): nvcc needs no GPU
  scripts/gpu-check.sh run DIR [--budget S] [--pytorch] [--out FILE]   # on the GPU machine

`prepare` writes, for each check model, the cuda and the cpu trainer's
source trees (`tcc compile --emit=source-tree`; for a 16-bit step also the
cpu trainer of its f32 step), packed as DIR/trees.tar.xz, and a manifest.
`build` builds them all here and packs the trainers as DIR/bins.tar.xz.
`run` uses a packed trainer where it starts (PyTorch's NVIDIA wheels on the
library path) and builds the tree with CMake where none does; it makes
synthetic data of the models' shapes (uncompressed IDX or CIFAR-10 binary,
fixed seed, a full data set's size) and checks in phases, each over every
model, so that a run stopped by --budget has answered the first for all:
  1. trains the cuda and the cpu trainer the same steps from the same seed
     and compares every checkpoint tensor and metric
     (test/runtime/cuda/compare_trainers.py: 1e-4 of each tensor's max); a
     16-bit step is measured against the cpu trainer's f32 step of the same
     model instead, every tensor no further from it than twice the cpu
     16-bit step plus one rounding, the whole state no further from the cpu
     16-bit step than the roundings two 16-bit steps can do differently, and
     the evaluation (EMA, TTA) within twice the cpu 16-bit run's distance
     from the f32 one's (compare_trainers.compare_mixed; every tensor's three
     distances reported where it fails); the trainers' warnings (a baked
     cuDNN plan replaced under --allow-fallback) are reported;
  2. times the cuda trainer over whole epochs (median epoch after the
     first), and with --pytorch PyTorch eager on each example's model.json
     (bench/pytorch_gpu.py) for a first ratio (the benchmark is issue 11's);
  3. trains the cuda trainer twice, and once with a --resume half way: the
     checkpoints must be equal bit for bit;
  4. runs the small models' cuda trainers under compute-sanitizer (memcheck,
     racecheck), which must report no error (a GPU the sanitizer does not
     support is reported as such, not as a pass).
It prints one line per check and writes DIR/gpu-check.json after each; the
exit status is 1 if any check failed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "runtime", "cuda"))

ARCHIVE = "trees.tar.xz"
BINARIES = "bins.tar.xz"

TEST_N = 2000  # test images of the synthetic data

# The examples whose convolutions scripts/gpu-session.sh tunes (prepare --with-tuner).
TUNED_EXAMPLES = ["airbench94", "resnet9", "fashion_cnn"]

# (model file, steps compared with the cpu trainer, sanitized, --precision or
# None for the model's own)
MODELS = [
    ("examples/fashion_mlp.json", 20, True, None),
    ("test/runtime/cuda/models/pool_mlp.json", 20, True, None),
    ("test/runtime/cuda/models/norm_mlp.json", 20, True, None),
    ("test/runtime/cuda/models/conv_net.json", 20, True, None),
    ("test/runtime/cuda/models/conv_net.json", 20, True, "bf16-mixed"),
    # pure bf16: weights, gradients and momentum stored in bf16 on the GPU too
    ("test/runtime/cuda/models/conv_net.json", 20, True, "bf16"),
    ("test/runtime/cuda/models/conv_net_fp16.json", 20, True, None),
    # cuBLASLt's GELU_AUX epilogue (a tanh GELU after a linear) beside an
    # exact GELU kernel; layer norm, softmax, concat, clipping and LAMB
    # (run in host emulation only before).
    ("test/runtime/cuda/models/gelu_mlp.json", 20, True, None),
    ("test/runtime/cuda/models/zoo_mlp.json", 20, True, None),
    # cuDNN's fused engines: a conv's bias and ReLU in its epilogue
    # (conv_epilogue groups), f32 and bf16 (run in host emulation only before).
    ("test/runtime/cuda/models/conv_relu_net.json", 20, True, None),
    ("test/runtime/cuda/models/conv_relu_net.json", 20, True, "bf16"),
    # Attention (tcc's own kernels, runtime/cuda/device/Attention.cuh):
    # causal with dropout and cross-shaped widths, f32 and bf16-mixed (run in
    # host emulation only before).
    ("test/runtime/cuda/models/attention_tokens.json", 20, True, None),
    ("test/runtime/cuda/models/attention_tokens.json", 20, True, "bf16-mixed"),
    # A token model: ids, an embedding with a padding row (its ordered
    # scatter-add, Embedding.cuh), a causal block, sequence targets with
    # ignore_index (TokenLoss.cuh, the token gather), f32 and bf16-mixed, on
    # token_data.py's sequences (run in host emulation only before).
    ("test/runtime/cuda/models/token_lm.json", 20, True, None),
    ("test/runtime/cuda/models/token_lm.json", 20, True, "bf16-mixed"),
    ("examples/fashion_cnn.json", 10, False, None),
    # The examples at their own precision (pure fp16) and airbench94 also in
    # bf16-mixed, 12 steps: past Lookahead's syncs (airbench94, every 5
    # steps) and the EMA's updates (ResNet-9: after steps 1, 6 and 11),
    # which the evaluation reads (--eval both: the EMA's and the raw weights').
    ("examples/airbench94.json", 12, False, None),
    ("examples/airbench94.json", 12, False, "bf16-mixed"),
    ("examples/resnet9.json", 12, False, None),
]


def model_name(path, precision):
    name = os.path.splitext(os.path.basename(path))[0]
    return name + "-" + precision if precision else name


MODEL_PATHS = {model_name(path, precision): path for path, *_, precision in MODELS}


def sh(cmd, cwd=None, env=None, timeout=None):
    """The command's result; a missing program is exit 127 with a message."""
    try:
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except FileNotFoundError as e:
        return subprocess.CompletedProcess(cmd, 127, "", str(e))
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, "", f"timed out after {e.timeout} s")


def prepare(args):
    os.makedirs(args.dir, exist_ok=True)
    manifest = {"gpu": args.gpu, "tuning_db": args.tuning_db, "cuda_flags": args.cuda_flag,
                "models": []}
    for path, compared, sanitized, precision in MODELS:
        name = model_name(path, precision)
        if args.only and name not in args.only:
            continue
        model = os.path.join(ROOT, path)
        with open(model) as f:
            spec = json.load(f)
        extra = ["--precision=" + precision] if precision else []
        step_precision = precision or spec["train"].get("precision", "fp32")
        sixteen_bit = step_precision != "fp32"
        # A 16-bit step is measured against the model's f32 step (cpu-f32).
        trees = [("cuda", extra), ("cpu", extra)] + (
            [("cpu-f32", ["--precision=fp32"])] if sixteen_bit else [])
        for tree, flags in trees:
            target = tree.split("-")[0]
            out = os.path.join(args.dir, name, tree)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            cmd = [args.tcc, "compile", model, "--target=" + target, "--emit=source-tree",
                   "-o", out, *flags]
            if target == "cuda":
                # --allow-fallback: where the GPU machine's cuDNN is not the
                # one the plans were baked for, the check still runs (the
                # baked plans first) and reports each replaced plan.
                cmd += ["--gpu=" + args.gpu, "--allow-fallback"]
                if args.tuning_db:
                    cmd.append("--tuning-db=" + os.path.abspath(args.tuning_db))
                cmd += args.cuda_flag
            r = sh(cmd)
            if r.returncode != 0:
                sys.exit(f"error: {' '.join(cmd)}: {r.stderr.strip()}")
        manifest["models"].append({
            "name": name, "data_format": spec["data"]["format"],
            "shape": spec["input"]["shape"], "classes": spec["input"]["classes"],
            "batch_size": spec["train"]["batch_size"], "compared_steps": compared,
            "sanitized": sanitized, "sixteen_bit": sixteen_bit, "precision": step_precision,
            "ema": bool(spec["train"].get("ema")),
            # A token model's data is token_data.py's sequences.
            "tokens": ({"vocab": spec["input"]["vocab"],
                        "ignore_index": spec["loss"].get("ignore_index", -100)}
                       if spec["input"].get("type") == "tokens" else None),
            "trees": [tree for tree, _ in trees], "program": os.path.splitext(
                os.path.basename(path))[0]})
        print(f"{name}: source trees written")
    with open(os.path.join(args.dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    if args.with_tuner:
        prepare_tuner(args)
    # The trees repeat the runtime and the headers: packed, they travel to
    # the GPU machine in well under its 64 MiB per call (57 MiB -> 0.6 MiB).
    names = [m["name"] for m in manifest["models"]]
    size = sum(os.path.getsize(os.path.join(d, n)) for name in names
               for d, _, files in os.walk(os.path.join(args.dir, name)) for n in files)
    archive = os.path.join(args.dir, ARCHIVE)
    with tarfile.open(archive, "w:xz") as tar:
        for name in names:
            tar.add(os.path.join(args.dir, name), arcname=name)
    for name in names:
        shutil.rmtree(os.path.join(args.dir, name))
    print(f"prepared {args.dir}: {len(names)} models, {size / 2**20:.1f} MiB of source trees "
          f"in {ARCHIVE} ({os.path.getsize(archive) / 2**20:.1f} MiB)")


def prepare_tuner(args):
    """DIR/tune: tcc-tune as built beside tcc (tcc-tune-cutlass, which also
    times CUTLASS's convolutions, where it builds), and the conv-plans tables
    of the examples for --gpu, for scripts/gpu-session.sh to time on the GPU
    (docs/tuning.md)."""
    tune = os.path.join(args.dir, "tune")
    os.makedirs(tune, exist_ok=True)
    build = os.path.dirname(os.path.dirname(args.tcc))
    # About 6 minutes of nvcc CPU the first time (24 kernels); ninja keeps them.
    r = sh(["cmake", "--build", build, "--target", "tcc-tune-cutlass"])
    tuner = os.path.join(os.path.dirname(args.tcc), "tcc-tune-cutlass")
    if r.returncode != 0:
        print("warning: tcc-tune-cutlass not built beside tcc, so the session times cuDNN's "
              f"engines only: {(r.stdout + r.stderr).strip()[-400:]}")
        tuner = os.path.join(os.path.dirname(args.tcc), "tcc-tune")
    shutil.copy(tuner, os.path.join(tune, "tcc-tune"))
    sh(["strip", os.path.join(tune, "tcc-tune")])
    # What cuDNN builds on the GPU itself (--device) of its fused attention
    # (SdpaProbe.cpp) and of dgrad + drelu + dbn_weight (DgradDbnProbe.cpp):
    # built here beside tcc, as tcc-tune is.
    for probe, what in (("tcc-sdpa-probe", "cuDNN's fused attention"),
                        ("tcc-dgrad-dbn-probe", "cuDNN's dgrad + drelu + dbn_weight graph")):
        r = sh(["cmake", "--build", build, "--target", probe])
        if r.returncode == 0:
            shutil.copy(os.path.join(build, "runtime", "cuda", probe), tune)
            sh(["strip", os.path.join(tune, probe)])
        else:  # gpu-session.sh skips the probe's step
            print(f"warning: {probe} not built beside {args.tcc}, so the session will not "
                  f"probe {what}: {(r.stdout + r.stderr).strip()[-400:]}")
    for name in TUNED_EXAMPLES:
        out = os.path.join(tune, name + ".json")
        r = sh([args.tcc, "compile", os.path.join(ROOT, "examples", name + ".json"),
                "--emit=conv-plans", "--gpu=" + args.gpu, "-o", out])
        if r.returncode != 0:
            sys.exit(f"error: the conv plans of {name}: {r.stderr.strip()}")
    print(f"{tune}: tcc-tune, the probes if built and the conv plans of "
          f"{', '.join(TUNED_EXAMPLES)}")


def unpack(folder):
    """The trees of `prepare`, unpacked once on the GPU machine."""
    archive = os.path.join(folder, ARCHIVE)
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        if any(m.name.startswith("/") or ".." in m.name.split("/") for m in members):
            sys.exit(f"error: {archive}: a path outside the folder")
        if not all(os.path.lexists(os.path.join(folder, m.name)) for m in members):
            tar.extractall(folder)


def write_idx(path, array):
    import numpy as np
    """IDX: magic (0, 0, dtype 0x08 = uint8, rank), big-endian dims, data."""
    with open(path, "wb") as f:
        f.write(bytes([0, 0, 0x08, array.ndim]))
        for d in array.shape:
            f.write(int(d).to_bytes(4, "big"))
        f.write(array.astype(np.uint8).tobytes())


def make_data(folder, fmt, shape, classes, train, test):
    """Images with a class-dependent mean, so that training moves."""
    import numpy as np
    if os.path.isdir(folder):
        return
    os.makedirs(folder)
    rng = np.random.default_rng(0)

    def split(n):
        labels = rng.integers(0, classes, n)
        images = rng.integers(0, 200, (n, *shape)) + labels.reshape(-1, *[1] * len(shape)) * 5
        return images.clip(0, 255).astype(np.uint8), labels.astype(np.uint8)

    (xtr, ytr), (xte, yte) = split(train), split(test)
    if fmt == "idx":
        for prefix, x, y in (("train", xtr, ytr), ("t10k", xte, yte)):
            write_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte"), x.reshape(len(x), *shape[-2:]))
            write_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte"), y)
    elif fmt == "cifar10":
        def records(x, y):
            return np.concatenate([y.reshape(-1, 1), x.reshape(len(x), -1)], axis=1).tobytes()
        for i, part in enumerate(np.array_split(np.arange(train), 5)):
            with open(os.path.join(folder, f"data_batch_{i + 1}.bin"), "wb") as f:
                f.write(records(xtr[part], ytr[part]))
        with open(os.path.join(folder, "test_batch.bin"), "wb") as f:
            f.write(records(xte, yte))
    else:
        raise SystemExit(f"error: no synthetic data for format {fmt}")


def build(tree, jobs, flags=(), env=None):
    out = os.path.join(tree, "build")
    r = sh(["cmake", "-S", tree, "-B", out, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", *flags],
           env=env)
    if r.returncode == 0:
        r = sh(["cmake", "--build", out, "-j", str(jobs)], env=env)
    if r.returncode != 0:
        return None, (r.stdout + r.stderr)[-3000:]
    return out, ""


def build_here(args):
    """Builds every tree where tcc is (nvcc and cuDNN link without a GPU;
    ccache, where installed, compiles their common runtime once) and packs
    the trainers as DIR/bins.tar.xz, so that the GPU machine's
    time goes to the checks: `run` uses a packed trainer where it starts
    there and builds the tree only where it does not (another glibc, say).
    The cpu trainers are built for any x86-64-v3 machine, not this one."""
    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    unpack(args.dir)
    # Every tree holds the same runtime: with ccache (paths taken relative to
    # DIR, so the trees' copies hash alike) it is compiled once per target.
    flags, env = [], None
    if shutil.which("ccache"):
        flags = ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache"]
        env = dict(os.environ, CCACHE_BASEDIR=os.path.abspath(args.dir), CCACHE_NOHASHDIR="1")
    programs = []
    for m in manifest["models"]:
        for tree in m["trees"]:
            folder = os.path.join(args.dir, m["name"], tree)
            start = time.monotonic()
            out, log = build(folder, args.jobs, flags + (["-DTCC_MARCH=x86-64-v3"]
                                                         if tree.startswith("cpu") else []), env)
            if not out:
                sys.exit(f"error: building {folder}: {log}")
            exe = os.path.join(out, m["program"])
            sh(["strip", exe])
            programs.append((exe, f"{m['name']}/{tree}/{m['program']}"))
            print(f"{m['name']}/{tree}: built in {time.monotonic() - start:.0f} s", flush=True)
    with tarfile.open(os.path.join(args.dir, BINARIES), "w:xz") as tar:
        for exe, name in programs:
            tar.add(exe, arcname=name)
    for m in manifest["models"]:
        shutil.rmtree(os.path.join(args.dir, m["name"]))
    print(f"built {len(programs)} trainers into {os.path.join(args.dir, BINARIES)} "
          f"({os.path.getsize(os.path.join(args.dir, BINARIES)) / 2**20:.1f} MiB)")


def resume_and_repeat(exe, data, name, root, compare_trainers, steps=6, timeout=None):
    """The cuda trainer is deterministic: two runs of `steps` steps save the
    same checkpoint bit for bit, and so does a run of steps/2 resumed for
    steps/2 more (the step's graph replays the same engines and kernels)."""
    work = os.path.join(root, "runs", name, "determinism")
    os.makedirs(work, exist_ok=True)

    def train(out, *extra):
        r = sh([exe, "--data", data, "--save", os.path.join(work, out), "--quiet", *extra],
               cwd=work, timeout=timeout)
        return r.returncode == 0, r.stderr.strip()[-1000:]

    def state(out):
        return compare_trainers.read_safetensors(os.path.join(work, out))

    def same(a, b):
        x, y = state(a), state(b)
        return sorted(x) == sorted(y) and all(
            x[k].shape == y[k].shape and x[k].tobytes() == y[k].tobytes() for k in x)

    runs = [train("a.safetensors", "--steps", str(steps)),
            train("b.safetensors", "--steps", str(steps)),
            train("half.safetensors", "--steps", str(steps // 2))]
    runs.append(train("resumed.safetensors", "--resume", os.path.join(work, "half.safetensors"),
                      "--steps", str(steps - steps // 2)))
    failed = [why for ok, why in runs if not ok]
    if failed:
        return [("repeat and resume", False, failed[0])]
    return [(f"two runs of {steps} steps", same("a.safetensors", "b.safetensors"),
             "the checkpoints differ"),
            (f"{steps // 2} steps resumed for {steps - steps // 2} more",
             same("a.safetensors", "resumed.safetensors"), "the checkpoint differs from "
             f"{steps} steps straight")]


def wheel_library_path():
    """PyTorch's NVIDIA wheels (site-packages/nvidia/*/lib), where the GPU
    machines keep cuDNN, cuBLASLt, NVRTC and the CUDA runtime."""
    import glob
    import site
    dirs = []
    for folder in site.getsitepackages():
        dirs += sorted(glob.glob(os.path.join(folder, "nvidia", "*", "lib")))
    return dirs


class Report:
    """The checks' results, written to DIR/gpu-check.json (and --out) after
    each check, so that a run cut short by its time keeps what it did."""

    def __init__(self, paths, gpu):
        self.paths, self.failed = paths, False
        self.data = {"gpu": gpu, "models": {}, "skipped": []}

    def model(self, name):
        return self.data["models"].setdefault(name, {})

    def check(self, name, check, ok, line, detail=None):
        """ok: True, False, or None for a check that could not run here."""
        self.model(name)[check] = detail if detail is not None else (
            "pass" if ok else "unavailable" if ok is None else "fail")
        self.failed |= ok is False
        print(f"{'PASS' if ok else 'SKIP' if ok is None else 'FAIL'} {name}: {line}", flush=True)
        self.save()

    def save(self):
        for path in self.paths:
            with open(path, "w") as f:
                json.dump(self.data, f, indent=2)


def trainer_for(args, m, tree):
    """The packed trainer of `build` where it starts here, else the tree
    built here. Returns (path or None, how, log)."""
    packed = os.path.join(args.dir, "bins", m["name"], tree, m["program"])
    why = "not packed"
    if os.path.exists(packed):
        r = sh([packed, "--help"])
        if r.returncode == 0:
            return packed, "packed", ""
        why = f"the packed trainer does not start: {(r.stdout + r.stderr).strip()[-500:]}"
    out, log = build(os.path.join(args.dir, m["name"], tree), args.jobs)
    if not out:
        return None, "build failed", why + "\n" + log
    return os.path.join(out, m["program"]), "built here", why


def train(exe, data, work, steps, timeout, extra=()):
    os.makedirs(work, exist_ok=True)
    return sh([exe, "--data", data, "--steps", str(steps), "--log-every", str(max(1, steps // 2)),
               "--save", os.path.join(work, "state.safetensors"),
               "--metrics", os.path.join(work, "metrics.jsonl"), "--quiet", *extra], cwd=work,
              timeout=timeout)


def compare_with_cpu(args, m, exes, data, test_n, report, compare_trainers):
    """Check 1: the cuda and the cpu trainer, same steps, same seed."""
    name, runs, warnings = m["name"], {}, []
    for tree, exe in exes.items():
        work = os.path.join(args.dir, "runs", name, tree)
        # A model with an EMA is evaluated with both its weights: the EMA's
        # (test_*) and the raw ones (raw_test_*), each compared.
        r = train(exe, data, work, m["compared_steps"], 2 * args.run_timeout,
                  ["--eval", "both"] if m.get("ema") else [])
        if r.returncode != 0:
            report.check(name, "compare", False, f"the {tree} trainer failed: exit "
                         f"{r.returncode}", f"{tree}: exit {r.returncode}: {r.stderr.strip()[-2000:]}")
            return
        warnings += [f"{tree}: {line}" for line in r.stderr.splitlines()
                     if line.startswith(("warning:", "note:"))]
        runs[tree] = (compare_trainers.read_safetensors(os.path.join(work, "state.safetensors")),
                      compare_trainers.read_metrics(os.path.join(work, "metrics.jsonl")))
    steps = m["compared_steps"]
    if warnings:
        report.model(name)["warnings"] = warnings
        print("    " + "\n    ".join(warnings))
    # A baked plan replaced by cuDNN's choice (--allow-fallback) means the
    # engines fixed at compile time did not all run.
    replaced = [w for w in warnings if "(--allow-fallback)" in w]
    report.check(name, "baked plans", not replaced,
                 f"{len(replaced)} baked cuDNN plans did not run: cuDNN's choice replaced them"
                 if replaced else "every baked cuDNN plan ran", replaced or None)
    if m["sixteen_bit"]:
        # Manifests written before "precision" was kept: bf16's, the looser u.
        precision = m.get("precision", "bf16")
        failures, summary = compare_trainers.compare_mixed(
            runs["cuda"], runs["cpu"], runs["cpu-f32"], precision, test_samples=test_n)
        w = summary["whole"]
        line = (f"after {steps} 16-bit steps the cuda trainer is {summary['ratio']:.2f} times as "
                f"far from the f32 step as the cpu trainer (|cuda - f32| {w['a_32']:.3g}, "
                f"|cpu16 - f32| {w['16_32']:.3g}), |cuda - cpu16| {w['a_16']:.3g} (at most "
                f"{summary['implementations_bound']:.3g})")
        line += "".join(f"\n    step {x['step']} {x['metric']}: cuda {x['cuda']:.6g}, cpu16 "
                        f"{x['cpu']:.6g}, f32 {x['f32']:.6g}" for x in summary["metrics"])
        if failures:  # every tensor's distances, to see where it went wrong
            line += "\n    " + "\n    ".join(compare_trainers.distance_table(summary))
        detail = {"steps": steps, "precision": precision, "distance_ratio": summary["ratio"],
                  "failures": failures, **summary}
    else:
        failures, worst = compare_trainers.compare(runs["cuda"], runs["cpu"], m["batch_size"],
                                                   steps, test_n)
        line = f"cuda vs cpu after {steps} steps: largest difference {worst:.2g} of a tensor's max"
        detail = {"steps": steps, "worst_relative": worst, "failures": failures}
    report.check(name, "compare", not failures,
                 line + "".join("\n    " + f for f in failures), detail)


def timed_epochs(args, m, exe, data, report):
    """Check 4: the cuda trainer's speed, from its metrics: the median
    epoch after the first (start-up, cuDNN's plans and the graph's capture
    are in the first), training only (evaluation has its own field)."""
    name, epochs = m["name"], args.timed_epochs
    work = os.path.join(args.dir, "runs", name, "timed")
    os.makedirs(work, exist_ok=True)
    start = time.monotonic()
    r = sh([exe, "--data", data, "--epochs", str(epochs), "--quiet", "--metrics",
            os.path.join(work, "metrics.jsonl")], cwd=work, timeout=args.run_timeout)
    wall = time.monotonic() - start
    if r.returncode != 0:
        report.check(name, "timed", False, f"timed run: exit {r.returncode}",
                     r.stderr.strip()[-2000:])
        return
    import statistics
    records = [x for x in compare_trainers_module().read_metrics(
        os.path.join(work, "metrics.jsonl")) if x.get("type") == "epoch"]
    later = records[1:] or records
    seconds = statistics.median(x["epoch_seconds"] for x in later)
    ips = statistics.median(x["images_per_second"] for x in later)
    detail = {"epochs": epochs, "wall_seconds": wall, "epoch_seconds": seconds,
              "images_per_second": ips, "records": records}
    report.check(name, "timed", True, f"{ips:.0f} img/s, {1000 * seconds:.1f} ms per epoch "
                 f"of {m['train_n']} images (median of epochs 2-{epochs}; {wall:.1f} s in all)",
                 detail)


def profiled(args, m, exe, data, report):
    """The cuda trainer's per-op profile (./train --profile, CUDA events
    around every kernel, steps not replayed from the graph): the op kinds
    that take the step's time, for the kernel work of issue 11."""
    name = m["name"]
    work = os.path.join(args.dir, "runs", name, "profile")
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "profile.json")
    r = sh([exe, "--data", data, "--steps", str(args.profile_steps), "--quiet", "--profile", out],
           cwd=work, timeout=args.run_timeout)
    if r.returncode != 0:
        report.check(name, "profile", False, f"profiled run: exit {r.returncode}",
                     r.stderr.strip()[-2000:])
        return
    with open(out) as f:
        profile = json.load(f)
    top = ", ".join(f"{o['op']} {100 * o['share']:.0f}%" for o in profile["ops"][:4])
    report.check(name, "profile", True, f"{profile['step_ms']:.2f} ms per step un-graphed: {top}",
                 profile)


def pytorch_eager(args, m, report):
    """PyTorch eager on the same model.json (bench/pytorch_gpu.py), for a
    first ratio next to the tcc trainer's figure of the same run."""
    name = m["name"]
    out = os.path.join(args.dir, "runs", name, "pytorch.json")
    model = os.path.join(ROOT, m["model"])
    r = sh([sys.executable, os.path.join(ROOT, "bench", "pytorch_gpu.py"), model,
            "--steps", str(args.pytorch_steps), "--json", out], timeout=args.run_timeout)
    if r.returncode != 0:
        report.check(name, "pytorch_eager", None, "PyTorch eager did not run",
                     (r.stdout + r.stderr).strip()[-1500:])
        return
    with open(out) as f:
        result = json.load(f)
    tcc = report.model(name).get("timed")
    ratio = ""
    if isinstance(tcc, dict):
        result["tcc_vs_pytorch"] = tcc["images_per_second"] / result["images_per_second"]
        ratio = f"; tcc {result['tcc_vs_pytorch']:.2f}x"
    report.check(name, "pytorch_eager", True, f"PyTorch eager {result['images_per_second']:.0f} "
                 f"img/s ({result['precision']}){ratio}", result)


def compare_trainers_module():
    import compare_trainers  # NumPy: on the GPU machine, not needed to prepare
    return compare_trainers


SANITIZER_UNSUPPORTED = ("Device not supported", "not supported on this platform")


def sanitized(args, m, exe, data, report):
    """Check 5: compute-sanitizer memcheck and racecheck, no error."""
    name = m["name"]
    for tool in ("memcheck", "racecheck"):
        r = sh([args.sanitizer, "--tool", tool, "--error-exitcode", "3", exe, "--data", data,
                "--steps", "3", "--quiet"], timeout=args.run_timeout)
        text = (r.stdout + r.stderr).strip()
        if any(s in text for s in SANITIZER_UNSUPPORTED):
            report.check(name, tool, None, f"compute-sanitizer {tool}: this machine's GPU is "
                         "not supported by it", text[-1000:])
            return
        report.check(name, tool, r.returncode == 0, f"compute-sanitizer {tool}",
                     "clean" if r.returncode == 0 else text[-2000:])


def run_checks(args):
    """The checks in phases, each over every model, the cheapest and most
    telling first, so that a run cut short by --budget still answers the
    first questions for every model: 1. cuda vs cpu, 2. speed (and PyTorch
    eager's with --pytorch, and the per-op profile), 3. repeat and resume,
    4. compute-sanitizer."""
    deadline = time.monotonic() + args.budget
    args.dir = os.path.abspath(args.dir)  # the trainers run in their own folders
    compare_trainers = compare_trainers_module()
    os.environ["LD_LIBRARY_PATH"] = ":".join(
        wheel_library_path() + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p])
    args.sanitizer = shutil.which("compute-sanitizer")
    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    unpack(args.dir)
    packed = os.path.join(args.dir, BINARIES)
    if os.path.exists(packed):
        with tarfile.open(packed) as tar:
            tar.extractall(os.path.join(args.dir, "bins"))
    info = sh(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    print("GPU:", info.stdout.strip() or info.stderr.strip(), flush=True)
    paths = [os.path.join(args.dir, "gpu-check.json")] + ([args.out] if args.out else [])
    report = Report(paths, info.stdout.strip())
    report.data["versions"] = {"nvcc": sh(["nvcc", "--version"]).stdout.strip().splitlines()[-1:],
                               "library_path": os.environ["LD_LIBRARY_PATH"]}
    models = [dict(m, model=MODEL_PATHS[m["name"]]) for m in manifest["models"]
              if not args.only or m["name"] in args.only]
    if args.only:  # in the order asked for: the first matter most under --budget
        models.sort(key=lambda m: args.only.index(m["name"]))

    def in_time(name, phase):
        if time.monotonic() < deadline:
            return True
        report.data["skipped"].append(f"{name}: {phase}")
        print(f"SKIP {name}: {phase} (out of time: --budget {args.budget} s)", flush=True)
        report.save()
        return False

    def guarded(name, phase, check, *rest):
        """A check's own failure (a bug of this script, say) is reported and
        the run goes on: GPU time is too scarce to lose the other checks."""
        try:
            check(*rest)
        except Exception as e:  # noqa: BLE001
            report.check(name, phase, False, f"{phase}: the check itself failed: {e!r}")

    def repeat_checks(m, exe):
        for check, ok, why in resume_and_repeat(exe, m["data"], m["name"], args.dir,
                                                compare_trainers, timeout=args.run_timeout):
            report.check(m["name"], check, ok, check + ("" if ok else ": " + why),
                         None if ok else why)

    phases = args.phases.split(",")
    ready = {}
    for m in models:  # 1: build or unpack, then cuda vs cpu
        if not in_time(m["name"], "compare"):
            continue
        name, exes = m["name"], {}
        m["train_n"] = 50000 if m["data_format"] == "cifar10" else 60000
        m["data"] = os.path.join(args.dir, "data", name)
        if m.get("tokens"):
            import token_data
            m["train_n"] = 8192
            if not os.path.isdir(m["data"]):
                token_data.write_token_data(m["data"], m["shape"][0], m["tokens"]["vocab"],
                                            m["tokens"]["ignore_index"], m["train_n"], TEST_N)
        else:
            make_data(m["data"], m["data_format"], m["shape"], m["classes"], m["train_n"],
                      TEST_N)
        for tree in m["trees"]:
            exe, how, log = trainer_for(args, m, tree)
            report.model(name).setdefault("trainers", {})[tree] = how
            if not exe:
                report.check(name, "build", False, f"{tree} tree: {how}", log[-3000:])
                break
            exes[tree] = exe
        if len(exes) < len(m["trees"]):
            continue
        ready[name] = exes["cuda"]
        if "compare" in phases:
            guarded(name, "compare", compare_with_cpu, args, m, exes, m["data"], TEST_N, report,
                    compare_trainers)
    for m in models:  # 2: speed
        if "timed" in phases and m["name"] in ready and in_time(m["name"], "timed"):
            guarded(m["name"], "timed", timed_epochs, args, m, ready[m["name"]], m["data"],
                    report)
            if "profile" in phases and in_time(m["name"], "profile"):
                guarded(m["name"], "profile", profiled, args, m, ready[m["name"]], m["data"],
                        report)
            if (args.pytorch and m["model"].startswith("examples/")
                    and in_time(m["name"], "pytorch_eager")):
                guarded(m["name"], "pytorch_eager", pytorch_eager, args, m, report)
    for m in models:  # 3: deterministic, and resumed exactly
        if "repeat" in phases and m["name"] in ready and in_time(m["name"], "repeat and resume"):
            guarded(m["name"], "repeat and resume", repeat_checks, m, ready[m["name"]])
    for m in models:  # 4: compute-sanitizer on the small models
        if ("sanitizer" in phases and m["name"] in ready and m["sanitized"] and args.sanitizer
                and in_time(m["name"], "compute-sanitizer")):
            guarded(m["name"], "compute-sanitizer", sanitized, args, m, ready[m["name"]],
                    m["data"], report)
    report.save()
    print("FAIL" if report.failed else "PASS")
    return 1 if report.failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="write the source trees (needs tcc)")
    p.add_argument("dir")
    p.add_argument("--tcc", default=os.path.join(ROOT, "build", "bin", "tcc"))
    p.add_argument("--gpu", default="h100")
    p.add_argument("--only", nargs="*", help="model names to prepare (default: all)")
    p.add_argument("--with-tuner", action="store_true",
                   help="also DIR/tune: tcc-tune, tcc-sdpa-probe and the examples' conv plans "
                        "(gpu-session.sh)")
    p.add_argument("--cuda-flag", action="append", default=[],
                   help="one more `tcc compile` flag for the cuda trees, e.g. "
                        "--cuda-flag=--disable-pass=channels-last (repeatable)")
    p.add_argument("--tuning-db", help="compile the cuda trees with this tuning file "
                   "(docs/tuning.md)")
    b = sub.add_parser("build", help="build the prepared trees here, for `run` to use")
    b.add_argument("dir")
    b.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    r = sub.add_parser("run", help="build and check on the GPU machine")
    r.add_argument("dir")
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    r.add_argument("--only", nargs="*", help="model names to check (default: all)")
    r.add_argument("--budget", type=float, default=float("inf"),
                   help="seconds: start no check after this (what is done is kept)")
    r.add_argument("--timed-epochs", type=int, default=3,
                   help="epochs of the timed run (default 3; the first is not counted)")
    r.add_argument("--pytorch", action="store_true",
                   help="also time PyTorch eager on each model (bench/pytorch_gpu.py)")
    r.add_argument("--pytorch-steps", type=int, default=30)
    r.add_argument("--run-timeout", type=float, default=300,
                   help="seconds one timed or sanitized run may take")
    r.add_argument("--out", help="also write the report here")
    r.add_argument("--phases", default="compare,timed,profile,repeat,sanitizer",
                   help="the phases to run, of compare,timed,profile,repeat,sanitizer "
                        "(default: all; profile runs with timed)")
    r.add_argument("--profile-steps", type=int, default=12,
                   help="steps of the profiled run (the first is a warm-up; default 12)")
    args = ap.parse_args()
    if args.command == "prepare":
        prepare(args)
        return 0
    if args.command == "build":
        build_here(args)
        return 0
    return run_checks(args)


if __name__ == "__main__":
    sys.exit(main())
