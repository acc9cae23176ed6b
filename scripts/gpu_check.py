#!/usr/bin/env python3
"""The cuda trainers on a real GPU, checked against the cpu trainers.

Two steps, because the GPU machines have CUDA, CMake and Python with NumPy
but no MLIR (docs/cuda.md, "Checking on a GPU"):

  scripts/gpu-check.sh prepare DIR [--gpu h100]   # here, with tcc built
  scripts/gpu-check.sh run DIR                    # on the GPU machine

`prepare` writes, for each check model, the cuda and the cpu trainer's
source trees (`tcc compile --emit=source-tree`; for a 16-bit step also the
cpu trainer of its f32 step), packed as DIR/trees.tar.xz, and a manifest.
`run` unpacks them, builds them with CMake, makes synthetic data of the models' shapes (uncompressed
IDX or CIFAR-10 binary, fixed seed), and for each model:
  1. trains the cuda and the cpu trainer the same steps from the same seed
     and compares every checkpoint tensor and metric
     (test/runtime/cuda/compare_trainers.py: 1e-4 of each tensor's max); a
     16-bit step is measured against the cpu trainer's f32 step of the same
     model instead, no further from it than twice the cpu 16-bit step
     (compare_trainers.compare_mixed);
  2. trains the cuda trainer twice, and once with a --resume half way: the
     checkpoints must be equal bit for bit;
  3. runs the cuda trainer under compute-sanitizer (memcheck, then racecheck
     on the small models), which must report no error;
  4. times the cuda trainer over more steps (a first figure; the benchmark
     against PyTorch is bench/, issue 11).
It prints one line per check and writes DIR/gpu-check.json; the exit status
is 1 if any check failed.
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

# (model file, steps compared with the cpu trainer, steps timed, sanitized,
# --precision or None for the model's own)
MODELS = [
    ("examples/fashion_mlp.json", 20, 400, True, None),
    ("test/runtime/cuda/models/pool_mlp.json", 20, 400, True, None),
    ("test/runtime/cuda/models/norm_mlp.json", 20, 400, True, None),
    ("test/runtime/cuda/models/conv_net.json", 20, 400, True, None),
    ("test/runtime/cuda/models/conv_net.json", 20, 400, True, "bf16-mixed"),
    ("test/runtime/cuda/models/conv_net_fp16.json", 20, 400, True, None),
    ("examples/fashion_cnn.json", 10, 200, False, None),
    # At their own precision: resnet9 fp16-mixed, airbench94 bf16-mixed.
    ("examples/resnet9.json", 2, 50, False, None),
    ("examples/airbench94.json", 2, 50, False, None),
]


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
    manifest = {"gpu": args.gpu, "models": []}
    for path, compared, timed, sanitized, precision in MODELS:
        name = os.path.splitext(os.path.basename(path))[0]
        model = os.path.join(ROOT, path)
        with open(model) as f:
            spec = json.load(f)
        extra = ["--precision=" + precision] if precision else []
        if precision:
            name += "-" + precision
        sixteen_bit = (precision or spec["train"].get("precision", "fp32")) != "fp32"
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
                cmd.append("--gpu=" + args.gpu)
            r = sh(cmd)
            if r.returncode != 0:
                sys.exit(f"error: {' '.join(cmd)}: {r.stderr.strip()}")
        manifest["models"].append({
            "name": name, "data_format": spec["data"]["format"],
            "shape": spec["input"]["shape"], "classes": spec["input"]["classes"],
            "batch_size": spec["train"]["batch_size"], "compared_steps": compared,
            "timed_steps": timed, "sanitized": sanitized, "sixteen_bit": sixteen_bit,
            "trees": [tree for tree, _ in trees], "program": os.path.splitext(
                os.path.basename(path))[0]})
        print(f"{name}: source trees written")
    with open(os.path.join(args.dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
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


def build(tree, jobs):
    out = os.path.join(tree, "build")
    r = sh(["cmake", "-S", tree, "-B", out, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release"])
    if r.returncode == 0:
        r = sh(["cmake", "--build", out, "-j", str(jobs)])
    if r.returncode != 0:
        return None, (r.stdout + r.stderr)[-3000:]
    return out, ""


def resume_and_repeat(exe, data, name, root, compare_trainers, steps=6):
    """The cuda trainer is deterministic: two runs of `steps` steps save the
    same checkpoint bit for bit, and so does a run of steps/2 resumed for
    steps/2 more (the step's graph replays the same engines and kernels)."""
    work = os.path.join(root, "runs", name, "determinism")
    os.makedirs(work, exist_ok=True)

    def train(out, *extra):
        r = sh([exe, "--data", data, "--save", os.path.join(work, out), "--quiet", *extra],
               cwd=work)
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


def run_checks(args):
    import compare_trainers  # NumPy: on the GPU machine, not needed to prepare
    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    unpack(args.dir)
    results, failed = [], False
    info = sh(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"])
    print("GPU:", info.stdout.strip() or info.stderr.strip())
    sanitizer = shutil.which("compute-sanitizer")
    for m in manifest["models"]:
        name = m["name"]
        if args.only and name not in args.only:
            continue
        row = {"model": name}
        data = os.path.join(args.dir, "data", name)
        test_n = 2000
        make_data(data, m["data_format"], m["shape"], m["classes"], 10000, test_n)
        exes = {}
        trees = m["trees"]
        for tree in trees:
            out, log = build(os.path.join(args.dir, name, tree), args.jobs)
            if not out:
                row[f"{tree}_build"] = "failed: " + log
                break
            exes[tree] = os.path.join(out, m["program"])
        if len(exes) < len(trees):
            print(f"FAIL {name}: build: {row}")
            results.append(row)
            failed = True
            continue
        runs = {}
        for target, exe in exes.items():
            work = os.path.join(args.dir, "runs", name, target)
            os.makedirs(work, exist_ok=True)
            steps = m["compared_steps"]
            r = sh([exe, "--data", data, "--steps", str(steps), "--log-every",
                    str(max(1, steps // 2)), "--save", os.path.join(work, "state.safetensors"),
                    "--metrics", os.path.join(work, "metrics.jsonl"), "--quiet"], cwd=work)
            if r.returncode != 0:
                row[f"{target}_run"] = f"exit {r.returncode}: {r.stderr.strip()[-2000:]}"
                break
            state = compare_trainers.read_safetensors(os.path.join(work, "state.safetensors"))
            runs[target] = (state, compare_trainers.read_metrics(os.path.join(work, "metrics.jsonl")))
        if len(runs) == len(trees) and m["sixteen_bit"]:
            failures, ratio = compare_trainers.compare_mixed(runs["cuda"], runs["cpu"],
                                                             runs["cpu-f32"])
            row["compare"] = {"steps": m["compared_steps"], "distance_ratio": ratio,
                              "failures": failures}
            ok = not failures
            print(f"{'PASS' if ok else 'FAIL'} {name}: after {m['compared_steps']} 16-bit "
                  f"steps the cuda trainer is {ratio:.2f} times as far from the f32 step as "
                  "the cpu trainer" + ("" if ok else "\n    " + "\n    ".join(failures)))
            failed |= not ok
        elif len(runs) == len(trees):
            failures, worst = compare_trainers.compare(runs["cuda"], runs["cpu"], m["batch_size"],
                                                       m["compared_steps"], test_n)
            row["compare"] = {"steps": m["compared_steps"], "worst_relative": worst,
                              "failures": failures}
            ok = not failures
            print(f"{'PASS' if ok else 'FAIL'} {name}: cuda vs cpu after {m['compared_steps']} "
                  f"steps: largest difference {worst:.2g} of a tensor's max"
                  + ("" if ok else "\n    " + "\n    ".join(failures)))
            failed |= not ok
        else:
            print(f"FAIL {name}: run: {row}")
            failed = True
        if "cuda" in exes:
            for check, ok, why in resume_and_repeat(exes["cuda"], data, name, args.dir,
                                                    compare_trainers):
                row[check] = "identical" if ok else why
                print(f"{'PASS' if ok else 'FAIL'} {name}: {check}" + ("" if ok else ": " + why))
                failed |= not ok
        if "cuda" in exes and sanitizer and m["sanitized"]:
            for tool in ("memcheck", "racecheck"):
                r = sh([sanitizer, "--tool", tool, "--error-exitcode", "3", exes["cuda"], "--data",
                        data, "--steps", "3", "--quiet"], timeout=1200)
                ok = r.returncode == 0
                row[tool] = "clean" if ok else (r.stdout + r.stderr)[-2000:]
                print(f"{'PASS' if ok else 'FAIL'} {name}: compute-sanitizer {tool}"
                      + ("" if ok else "\n" + row[tool]))
                failed |= not ok
        if "cuda" in exes:
            start = time.monotonic()
            r = sh([exes["cuda"], "--data", data, "--steps", str(m["timed_steps"]), "--quiet"],
                   cwd=os.path.join(args.dir, "runs", name))
            seconds = time.monotonic() - start
            if r.returncode == 0:
                row["timed"] = {"steps": m["timed_steps"], "seconds": seconds,
                                "ms_per_step_with_startup": 1000 * seconds / m["timed_steps"]}
                print(f"     {name}: {m['timed_steps']} cuda steps in {seconds:.2f} s "
                      "(start-up and evaluation included)")
        results.append(row)
    with open(os.path.join(args.dir, "gpu-check.json"), "w") as f:
        json.dump({"gpu": info.stdout.strip(), "results": results}, f, indent=2)
    print("FAIL" if failed else "PASS")
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="write the source trees (needs tcc)")
    p.add_argument("dir")
    p.add_argument("--tcc", default=os.path.join(ROOT, "build", "bin", "tcc"))
    p.add_argument("--gpu", default="h100")
    r = sub.add_parser("run", help="build and check on the GPU machine")
    r.add_argument("dir")
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    r.add_argument("--only", nargs="*", help="model names to check (default: all)")
    args = ap.parse_args()
    if args.command == "prepare":
        prepare(args)
        return 0
    return run_checks(args)


if __name__ == "__main__":
    sys.exit(main())
