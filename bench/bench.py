#!/usr/bin/env python3
"""The benchmark of issue 11: tcc against PyTorch eager and torch.compile on
one GPU, from the same model.json files (docs/performance.md, "The
benchmark").

  bench.py prepare DIR [--gpu h100|h200|a100] [--only MODEL...]
      Where tcc is (MLIR): compiles the cuda trainers of airbench94, ResNet-9
      and the Fashion-MNIST CNN in fp32, bf16-mixed and pure fp16, timing each `tcc
      compile` end to end (nvcc included) on this machine, and packs them
      with their compile reports and Fashion-MNIST into DIR (a few MiB, for
      the GPU machine, which has no MLIR).
  bench.py run DIR [--epochs N] [--only MODEL...] [--rows ROW...] [--budget S]
      On the GPU machine (bench/run.sh): trains every row, prints the table
      and writes it as JSON (DIR/results.json, $OUT, bench/results/) and a
      PNG bar chart where matplotlib is installed.
  bench.py table RESULTS.json [--png FILE]
      The table of a run again, and its chart (bench/results/*.json).

Rows per model (--rows, in the order given): tcc in pure fp16 (the
airbench94 and ResNet-9 examples' own precision), bf16-mixed and fp32 (the
trainers' own metrics: epoch times, training only); PyTorch eager and
torch.compile(mode="max-autotune") in bf16 autocast and in pure fp16
(`.half()`, as the originals), and eager in NCHW (bench/pytorch_gpu.py: the
parity tests' network and recipe, written as the fastest PyTorch: its
docstring and docs/performance.md's baseline audit). Every row trains the
recipe's epochs, at least 4 (--epochs instead): the median of the epochs
after the first, their least and most.
Columns: ms per epoch, images/s, achieved TFLOP/s and % of the GPU's dense
bf16 peak (training FLOPs per image counted on the PyTorch model: 2 per
multiply-add of every convolution and linear layer, three passes), peak
memory (tcc: the planned step, state and scratch arenas; PyTorch: the
most it allocated for the steps), compile time (tcc compile with nvcc on the
machine that prepared DIR; torch.compile: its first step), seconds end to
end (tcc: the trainer's process from start to exit; PyTorch: data read,
model and whitening built, every epoch and the evaluation, after `import
torch`), the test accuracy reached, and the ratios to the fastest eager and
the fastest torch.compile row of the model. --profile adds each tcc
trainer's per-op profile (./train --profile) and each PyTorch row's kernels
per step (torch.profiler). CIFAR-10 is real when DIR/data/cifar-10-batches-bin (or
--cifar) has it, synthetic CIFAR-shaped data otherwise: the table says
which, and accuracy on synthetic data means nothing.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tarfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

MODELS = ["airbench94", "resnet9", "fashion_cnn", "vit_cifar"]
PRECISIONS = ["fp32", "bf16-mixed", "fp16"]
# A model's own precisions where not all: the ViT's recipe is bf16-mixed,
# and nobody trains a transformer in pure fp16, so it has no fp16 rows.
MODEL_PRECISIONS = {"vit_cifar": ["fp32", "bf16-mixed"]}
# The tcc rows and the precision each trains in: tcc-fp16 is pure fp16, as
# the airbench94 and ResNet-9 examples (and their originals) train; last, so
# that a tight --budget skips it first.
TCC_ROWS = {"tcc-bf16": "bf16-mixed", "tcc-fp32": "fp32", "tcc-fp16": "fp16"}
# PyTorch rows: (precision, torch.compile mode, memory format).
PYTORCH_ROWS = {
    "pytorch-eager": ("bf16-mixed", None, "auto"),
    "pytorch-eager-fp16": ("fp16", None, "auto"),
    "pytorch-eager-fp16-nchw": ("fp16", None, "contiguous"),
    "torch-compile": ("bf16-mixed", "max-autotune", "auto"),
    "torch-compile-fp16": ("fp16", "max-autotune", "auto"),
}
ROWS = ["tcc-fp16", "tcc-bf16", "pytorch-eager-fp16", "pytorch-eager", "tcc-fp32",
        "pytorch-eager-fp16-nchw", "torch-compile-fp16", "torch-compile"]
MIN_EPOCHS = 4  # a warm-up epoch and at least 3 measured
BINARIES = "bench-bins.tar.xz"
# Dense (no sparsity) bf16 tensor-core peaks, TFLOP/s, by a word of the GPU's name.
DENSE_BF16_PEAK = [("H200", 989.4), ("H100", 989.4), ("A100", 312.0)]


def sh(cmd, cwd=None, env=None, timeout=None):
    try:
        return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except FileNotFoundError as e:  # no nvidia-smi on a dry run's machine
        return subprocess.CompletedProcess(cmd, 127, "", str(e))
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or "", (e.stderr or "") +
                                           f"\n(timed out after {timeout} s)")


def exe_name(model, precision):
    return f"{model}-{precision}"


# --- prepare (where tcc is) ----------------------------------------------------

def prepare(args):
    os.makedirs(os.path.join(args.dir, "bin"), exist_ok=True)
    os.makedirs(os.path.join(args.dir, "reports"), exist_ok=True)
    commit = sh(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"]).stdout.strip()
    # The trainers are tcc's at `commit` only where no tracked file differs.
    clean = not sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).stdout
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
                if line.startswith("model name")), platform.machine())
    manifest = {"gpu": args.gpu, "tcc_commit": commit, "tcc_tree_clean": clean, "prepared": datetime.datetime.now(
        datetime.timezone.utc).isoformat(timespec="seconds"),
        "compile_machine": f"{os.cpu_count()} x {cpu}", "rows": []}
    for model in MODELS:
        if args.only and model not in args.only:
            continue
        with open(os.path.join(ROOT, "examples", model + ".json")) as f:
            spec = json.load(f)
        for precision in MODEL_PRECISIONS.get(model, PRECISIONS):
            name = exe_name(model, precision)
            report = os.path.join(args.dir, "reports", name + ".json")
            cmd = [args.tcc, "compile", os.path.join(ROOT, "examples", model + ".json"),
                   "--target=cuda", "--gpu=" + args.gpu, "--precision=" + precision,
                   "-o", os.path.join(args.dir, "bin", name), "--report", report]
            start = time.monotonic()
            r = sh(cmd)
            seconds = time.monotonic() - start
            if r.returncode != 0:
                sys.exit(f"error: {' '.join(cmd)}: {r.stderr.strip()}")
            with open(report) as f:
                rep = json.load(f)
            manifest["rows"].append({
                "model": model, "precision": precision, "exe": name,
                "compile_seconds": seconds, "data_format": spec["data"]["format"],
                "shape": spec["input"]["shape"], "classes": spec["input"]["classes"],
                "epochs": spec["train"]["epochs"], "peak_bytes": rep["peak_bytes"],
                "kernels_per_step": rep["kernels_per_step"]["after_fusion"]})
            print(f"{name}: tcc compile {seconds:.1f} s", flush=True)
    with tarfile.open(os.path.join(args.dir, BINARIES), "w:xz") as tar:
        tar.add(os.path.join(args.dir, "bin"), arcname="bin")
    shutil.rmtree(os.path.join(args.dir, "bin"))
    fashion = "/usr/share/datasets/fashion-mnist"
    if os.path.isdir(fashion):
        shutil.copytree(fashion, os.path.join(args.dir, "data", "fashion-mnist"),
                        dirs_exist_ok=True)
    with open(os.path.join(args.dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    size = sum(os.path.getsize(os.path.join(d, n)) for d, _, files in os.walk(args.dir)
               for n in files)
    print(f"prepared {args.dir}: {len(manifest['rows'])} trainers, {size / 2**20:.1f} MiB; "
          "on the GPU machine: bench/run.sh " + args.dir)


# --- run (on the GPU) -------------------------------------------------------

def dense_peak(gpu):
    return next((peak for word, peak in DENSE_BF16_PEAK if word in gpu), None)


def data_for(args, fmt, shape, classes):
    """(directory, "real" | "synthetic") for a data format."""
    import gpu_check
    if fmt == "cifar10":
        real = args.cifar or os.path.join(args.dir, "data", "cifar-10-batches-bin")
        if os.path.exists(os.path.join(real, "test_batch.bin")):
            return real, "real"
        folder = os.path.join(args.dir, "data", "synthetic-cifar10")
        gpu_check.make_data(folder, fmt, shape, classes, 50000, 10000)
        return folder, "synthetic"
    real = os.path.join(args.dir, "data", "fashion-mnist")
    if os.path.isdir(real):
        return real, "real"
    folder = os.path.join(args.dir, "data", "synthetic-idx")
    gpu_check.make_data(folder, fmt, shape, classes, 60000, 10000)
    return folder, "synthetic"


def tcc_row(args, row, data, epochs):
    exe = os.path.join(args.dir, "bin", row["exe"])
    work = os.path.join(args.dir, "runs", row["exe"])
    os.makedirs(work, exist_ok=True)
    metrics = os.path.join(work, "metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    start = time.monotonic()
    r = sh([exe, "--data", data, "--epochs", str(epochs), "--quiet", "--metrics", metrics],
           cwd=work, timeout=args.run_timeout)
    end_to_end = time.monotonic() - start
    if r.returncode != 0:
        return {"error": f"exit {r.returncode}: {r.stderr.strip()[-1500:]}"}
    with open(metrics) as f:
        records = [json.loads(line) for line in f if line.strip()]
    epochs_run = [x for x in records if x.get("type") == "epoch"]
    later = epochs_run[1:] or epochs_run
    seconds = [x["epoch_seconds"] for x in later]
    result = {"ms_per_epoch": 1000 * statistics.median(seconds),
              "ms_per_epoch_min": 1000 * min(seconds), "ms_per_epoch_max": 1000 * max(seconds),
              "images_per_second": statistics.median(x["images_per_second"] for x in later),
              "epoch_seconds": [x["epoch_seconds"] for x in epochs_run],
              "end_to_end_seconds": end_to_end,
              "test_accuracy": epochs_run[-1]["test_acc"],
              "peak_memory_bytes": row["peak_bytes"],
              "compile_seconds": row["compile_seconds"],
              "kernels_per_step": row["kernels_per_step"]}
    if args.profile:
        result["profile"] = tcc_profile(args, exe, work, data)
    return result


def tcc_profile(args, exe, work, data):
    """The trainer's per-op profile (CUDA events around each op, 12 steps
    un-graphed, the first a warm-up): the step's ms and its ops by share."""
    out = os.path.join(work, "profile.json")
    r = sh([exe, "--data", data, "--steps", "12", "--quiet", "--profile", out], cwd=work,
           timeout=args.run_timeout)
    if r.returncode != 0:
        return {"error": f"exit {r.returncode}: {r.stderr.strip()[-500:]}"}
    with open(out) as f:
        return json.load(f)


def pytorch_row(args, model, name, data, epochs):
    precision, compile_mode, memory_format = PYTORCH_ROWS[name]
    out = os.path.join(args.dir, "runs", f"{model}-{name}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cmd = [sys.executable, os.path.join(ROOT, "bench", "pytorch_gpu.py"),
           os.path.join(ROOT, "examples", model + ".json"), "--data", data, "--epochs",
           str(epochs), "--precision", precision, "--memory-format", memory_format,
           "--json", out, "--device", args.device]
    if compile_mode:
        cmd += ["--compile", compile_mode]
    if args.profile:
        cmd += ["--profile-steps", "5"]
    r = sh(cmd, timeout=args.run_timeout)
    if r.returncode != 0:
        return {"error": f"exit {r.returncode}: {(r.stdout + r.stderr).strip()[-1500:]}"}
    with open(out) as f:
        return json.load(f)


def environment():
    def first(cmd):
        r = sh(cmd)
        return (r.stdout or r.stderr).strip()
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "gpu": first(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                          "--format=csv,noheader"]),
            "nvcc": first(["nvcc", "--version"]).splitlines()[-1:],
            "torch": first([sys.executable, "-c", "import torch; print(torch.__version__, "
                            "torch.version.cuda, torch.backends.cudnn.version())"])}


def row_entry(measured, model, row, data, epochs):
    """A table row: what the trainer measured (a PyTorch row's JSON has its
    own `epochs`, the count it ran) under the run's own keys."""
    return {**measured, "model": model, "row": row, "data": data, "epochs": epochs}


def save(args, result, model, flops, peak):
    """The rows so far, with the model's FLOPs per image (counted by the
    PyTorch rows), as JSON in DIR, bench/results/ and $OUT."""
    gpu = result["environment"]["gpu"]
    for entry in result["rows"]:
        if entry["model"] == model and flops and "images_per_second" in entry:
            entry["flops_per_image"] = flops
            entry["tflops"] = flops * entry["images_per_second"] / 1e12
            entry["percent_of_dense_bf16_peak"] = (100 * entry["tflops"] / peak
                                                   if peak else None)
    stamp = result["environment"]["date"][:10]
    gpu_word = (gpu.split(",")[0].split() or ["gpu"])[-1] if gpu else "gpu"
    names = [os.path.join(args.dir, "results.json"),
             os.path.join(ROOT, "bench", "results", f"{stamp}-{gpu_word}.json")]
    if os.environ.get("OUT"):
        names.append(os.path.join(os.environ["OUT"], "bench-results.json"))
    for name in names:
        os.makedirs(os.path.dirname(name), exist_ok=True)
        with open(name + ".tmp", "w") as f:
            json.dump(result, f, indent=1)
        os.replace(name + ".tmp", name)


def run(args):
    import gpu_check
    args.dir = os.path.abspath(args.dir)
    os.environ["LD_LIBRARY_PATH"] = ":".join(
        gpu_check.wheel_library_path() +
        [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p])
    with open(os.path.join(args.dir, "manifest.json")) as f:
        manifest = json.load(f)
    with tarfile.open(os.path.join(args.dir, BINARIES)) as tar:
        tar.extractall(args.dir)
    deadline = time.monotonic() + args.budget
    result = {"format": "tcc-bench/1", "environment": environment(), "manifest": manifest,
              "rows": [], "skipped": []}
    gpu = result["environment"]["gpu"]
    print("GPU:", gpu, flush=True)
    peak = dense_peak(gpu)
    by_model = {}
    for row in manifest["rows"]:
        by_model.setdefault(row["model"], {})[row["precision"]] = row
    for model, precisions in by_model.items():
        if args.only and model not in args.only:
            continue
        first = next(iter(precisions.values()))
        data, kind = data_for(args, first["data_format"], first["shape"], first["classes"])
        epochs = args.epochs or max(first["epochs"], MIN_EPOCHS)
        flops = None
        for name in args.rows:
            precision = TCC_ROWS.get(name) or PYTORCH_ROWS[name][0]
            if precision not in MODEL_PRECISIONS.get(model, PRECISIONS):
                continue
            if time.monotonic() > deadline:
                result["skipped"].append(f"{model} {name}")
                print(f"SKIP {model} {name} (--budget {args.budget} s)", flush=True)
                continue
            if name.startswith("tcc-"):
                measured = tcc_row(args, precisions[precision], data, epochs)
            else:
                measured = pytorch_row(args, model, name, data, epochs)
                flops = measured.get("flops_per_image") or flops
            entry = row_entry(measured, model, name, kind, epochs)
            result["rows"].append(entry)
            print(line_of(entry), flush=True)
            save(args, result, model, flops, peak)  # a run cut short keeps its rows
    print(table(result))
    png = os.path.join(os.environ.get("OUT", args.dir), "bench.png")
    print(chart(result, png))
    return 0 if all("error" not in r for r in result["rows"]) else 1


# --- the table and the chart -------------------------------------------------

def line_of(r):
    if "error" in r:
        return f"{r['model']:12} {r['row']:14} ERROR {r['error'][:200]}"
    return (f"{r['model']:12} {r['row']:14} {r['ms_per_epoch']:10.1f} ms/epoch "
            f"{r['images_per_second']:10.0f} img/s  acc {r.get('test_accuracy') or 0:.4f}")


def table(result):
    head = ("| model | row | data | ms/epoch | min-max | img/s | vs eager | vs compile | "
            "TFLOP/s | % bf16 peak | peak MiB | compile s | end-to-end s | test acc |")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]

    def fastest(prefix):
        """{model: images/s} of the model's fastest row of a kind."""
        best = {}
        for r in result["rows"]:
            if r["row"].startswith(prefix) and "error" not in r:
                best[r["model"]] = max(best.get(r["model"], 0), r["images_per_second"])
        return best
    eager, compiled = fastest("pytorch-eager"), fastest("torch-compile")

    def num(v, fmt):
        return format(v, fmt) if isinstance(v, (int, float)) else "—"

    def ratio(r, best):
        base = best.get(r["model"])
        return num(r["images_per_second"] / base if base else None, ".2f") + ("x" if base else "")
    for r in result["rows"]:
        if "error" in r:
            lines.append(f"| {r['model']} | {r['row']} | {r['data']} | error: "
                         f"{r['error'][:80]} |" + " |" * 10)
            continue
        mem = r.get("peak_memory_bytes")
        low, high = r.get("ms_per_epoch_min"), r.get("ms_per_epoch_max")
        lines.append("| " + " | ".join([
            r["model"], r["row"], r["data"], num(r["ms_per_epoch"], ".1f"),
            f"{low:.1f}-{high:.1f}" if low is not None and high is not None else "—",
            num(r["images_per_second"], ".0f"), ratio(r, eager), ratio(r, compiled),
            num(r.get("tflops"), ".1f"), num(r.get("percent_of_dense_bf16_peak"), ".1f"),
            num(mem / 2**20 if mem else None, ".0f"), num(r.get("compile_seconds"), ".1f"),
            num(r.get("end_to_end_seconds"), ".1f"), num(r.get("test_accuracy"), ".4f")]) + " |")
    return "\n".join(lines)


def chart(result, path):
    """Images/s per model and row as a bar chart, if matplotlib is here."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ("no matplotlib here: the chart is drawn from the JSON with "
                "`bench/bench.py table RESULTS.json --png FILE` where it is")
    rows = [r for r in result["rows"] if "error" not in r]
    models = list(dict.fromkeys(r["model"] for r in rows))
    kinds = list(dict.fromkeys(r["row"] for r in rows))
    fig, axes = plt.subplots(1, max(1, len(models)), figsize=(4 * max(1, len(models)), 3.5))
    axes = axes if hasattr(axes, "__len__") else [axes]
    for ax, model in zip(axes, models):
        mine = {r["row"]: r["images_per_second"] for r in rows if r["model"] == model}
        ax.bar(range(len(kinds)), [mine.get(k, 0) for k in kinds],
               color=["C%d" % i for i in range(len(kinds))])
        ax.set_xticks(range(len(kinds)))
        ax.set_xticklabels(kinds, rotation=30, ha="right", fontsize=8)
        ax.set_title(model)
        ax.set_ylabel("images / s")
    fig.suptitle(result["environment"].get("gpu", ""), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return f"chart: {path}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare", help="compile the trainers (where tcc is)")
    p.add_argument("dir")
    p.add_argument("--gpu", default="h100", choices=["h100", "h200", "a100"])
    p.add_argument("--tcc", default=os.path.join(ROOT, "build", "bin", "tcc"))
    p.add_argument("--only", nargs="+", choices=MODELS)
    r = sub.add_parser("run", help="train every row and write the table (on the GPU)")
    r.add_argument("dir")
    r.add_argument("--epochs", type=float,
                   help=f"instead of each recipe's (at least {MIN_EPOCHS} by default)")
    r.add_argument("--profile", action="store_true",
                   help="also profile each row: tcc per op, PyTorch kernels per step")
    r.add_argument("--only", nargs="+", choices=MODELS)
    r.add_argument("--rows", nargs="+", choices=ROWS, default=ROWS,
                   help="in this order (default: %(default)s)")
    r.add_argument("--cifar", help="a CIFAR-10 binary folder (default: DIR/data/...)")
    r.add_argument("--budget", type=float, default=1e9, help="seconds; later rows are skipped")
    r.add_argument("--run-timeout", type=float, default=900, help="seconds one row may take")
    r.add_argument("--device", default="cuda", help="the PyTorch rows' (cpu: a dry run)")
    t = sub.add_parser("table", help="the table and chart of a results file")
    t.add_argument("results")
    t.add_argument("--png")
    args = parser.parse_args()
    if args.command == "prepare":
        return prepare(args)
    if args.command == "run":
        return run(args)
    with open(args.results) as f:
        result = json.load(f)
    print(table(result))
    if args.png:
        print(chart(result, args.png))
    return 0


if __name__ == "__main__":
    sys.exit(main() or 0)
