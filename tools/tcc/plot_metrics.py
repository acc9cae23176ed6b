"""tcc plot: training curves from trainers' metrics files (JSON lines).

Run by `tcc plot RUN.jsonl... -o curves.png` (tools/tcc/tcc.cpp), with
Debian's python3-matplotlib. Three panels against epochs (or steps, or
wall-clock seconds: --x): loss (train solid, test dashed), accuracy
(likewise) and the learning rate, the loss and learning-rate axes linear or
logarithmic (--log); each run one colour, labelled by its file name. Step records (--log-every) draw the training
curves where present; epoch records draw the test curves. The PNG is written
atomically. Every problem is one "error:" line and exit status 1.
"""
import json
import math
import os
import stat
import sys
import tempfile


def fail(message):
    print("error: " + message, file=sys.stderr)
    sys.exit(1)


def number(v):
    """A metrics value as a float: null -> None, "NaN"/"Infinity" -> float."""
    if v is None:
        return None
    if isinstance(v, str):
        return {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}.get(v)
    return float(v)


# The fields a record's curves read, and the largest magnitude drawn: an f32
# trainer writes nothing past 3.4e38, and matplotlib fails on axes near 1e308.
METRIC_FIELDS = ("train_loss", "test_loss", "train_acc", "test_acc", "lr", "elapsed_s")
LARGEST = 3.5e38


def check_record(record, where):
    """Fails on a field of the wrong type; warns on values past f32's range."""
    for key in ("epoch", "step"):
        v = record[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            fail("%s: \"%s\" must be a number, got %s" % (where, key, json.dumps(v)[:40]))
    for key in METRIC_FIELDS:
        v = record.get(key)
        if v is None or v in ("NaN", "Infinity", "-Infinity"):
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            fail("%s: \"%s\" must be a number, null or \"NaN\", got %s"
                 % (where, key, json.dumps(v)[:40]))
        if abs(v) > LARGEST:
            print("warning: %s: \"%s\" is %g, beyond the range of f32 training; not drawn"
                  % (where, key, v), file=sys.stderr)
            record[key] = None


# The largest metrics file read (docs/reliability.md): a run logging every
# step writes about 250 bytes a step, so 1 GiB is some four million steps.
MAX_BYTES = 1 << 30


def read_text(path):
    """A metrics file's text: a regular file only (stat before the open, and
    opened non-blocking: /dev/zero or a FIFO must not hang or fill memory),
    of at most MAX_BYTES."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a directory" if stat.S_ISDIR(mode) else
                    "a FIFO" if stat.S_ISFIFO(mode) else
                    "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket")
            fail("%s: cannot read it (it is %s, not a regular file)" % (path, kind))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                fail("%s: cannot read it (it changed into a special file)" % path)
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        fail("%s: cannot read it (%s)" % (path, e.strerror))
    if len(data) > MAX_BYTES:
        fail("%s: cannot read it (it is larger than %d MiB, the limit for metrics files)"
             % (path, MAX_BYTES >> 20))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        fail("%s: not a metrics file (not UTF-8 text)" % path)


def read_run(path):
    """(epoch records, step records) of one metrics file, in file order."""
    lines = read_text(path).splitlines()
    epochs, steps = [], []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as e:
            fail("%s:%d: not a JSON line (%s); a metrics file holds one JSON "
                 "object per line, as './train --metrics FILE' writes it" % (path, i, e))
        if not isinstance(record, dict) or "epoch" not in record or "step" not in record:
            fail("%s:%d: not a metrics record (no \"epoch\" and \"step\")" % (path, i))
        check_record(record, "%s:%d" % (path, i))
        (steps if record.get("type") == "step" else epochs).append(record)
    if not epochs and not steps:
        fail("%s: no metrics records" % path)
    return epochs, steps


# --x: the record field each choice reads, and the axis label.
X_AXES = {"epoch": ("epoch", "epoch"), "step": ("step", "step"),
          "time": ("elapsed_s", "wall-clock seconds")}
LOG_PANELS = ("loss", "lr")


def series(records, key, x_key):
    """Points of `key` against `x_key`; a positive-only axis drops y <= 0 on a log scale."""
    xs, ys = [], []
    for r in records:
        x, y = number(r.get(x_key)), number(r.get(key))
        if x is not None and y is not None and math.isfinite(y):
            xs.append(x)
            ys.append(y)
    return xs, ys


def option_value(argv, i, name):
    """The value of option `name` at argv[i] (`--name=V` or `--name V`) and the next index."""
    a = argv[i]
    if a.startswith(name + "="):
        return a.split("=", 1)[1], i + 1
    if i + 1 >= len(argv):
        fail("%s needs a value" % name)
    return argv[i + 1], i + 2


def main(argv):
    output, runs, x_axis, log = None, [], "epoch", set()
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--x" or a.startswith("--x="):
            x_axis, i = option_value(argv, i, "--x")
            if x_axis not in X_AXES:
                fail("--x %s: expected one of %s" % (x_axis, ", ".join(X_AXES)))
            continue
        if a == "--log" or a.startswith("--log="):
            value, i = option_value(argv, i, "--log")
            log = {p for p in value.split(",") if p}
            unknown = sorted(log - set(LOG_PANELS))
            if unknown or not log:
                fail("--log %s: expected a comma-separated list of %s" % (value, ", ".join(LOG_PANELS)))
            continue
        if a in ("-o", "--output"):
            if i + 1 >= len(argv):
                fail("%s needs a file name" % a)
            output, i = argv[i + 1], i + 2
            continue
        if a.startswith("--output="):
            output, i = a.split("=", 1)[1], i + 1
            continue
        if a.startswith("-") and a != "-":
            fail("unknown option '%s' (see 'tcc plot --help')" % a)
        runs.append(a)
        i += 1
    if not runs:
        fail("no metrics file given; usage: tcc plot RUN.jsonl... -o curves.png")
    if not output:
        fail("no output given; add -o curves.png")
    if not output.endswith(".png"):
        fail("-o %s: the plot is a PNG; give a name ending in .png" % output)
    directory = os.path.dirname(os.path.abspath(output))
    if not os.path.isdir(directory):
        fail("-o %s: directory '%s' does not exist" % (output, directory))
    data = [(os.path.basename(p), *read_run(p)) for p in runs]

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("tcc plot needs matplotlib for %s: install Debian's python3-matplotlib "
             "(scripts/setup.sh does)" % sys.executable)

    x_key, x_label = X_AXES[x_axis]
    if x_axis == "time" and not any("elapsed_s" in r for _, e, st in data for r in e + st):
        fail("--x time: the metrics files have no \"elapsed_s\"; use --x epoch or --x step")
    fig, (loss_ax, acc_ax, lr_ax) = plt.subplots(1, 3, figsize=(15, 4.2))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (name, epochs, steps) in enumerate(data):
        c = colors[k % len(colors)]
        train = steps if steps else epochs
        for ax, key in ((loss_ax, "loss"), (acc_ax, "acc")):
            x, y = series(train, "train_" + key, x_key)
            if x:
                ax.plot(x, y, color=c, label="%s train" % name)
            x, y = series(epochs, "test_" + key, x_key)
            if x:
                ax.plot(x, y, color=c, linestyle="--", marker="o", markersize=3,
                        label="%s test" % name)
        x, y = series(sorted(epochs + steps, key=lambda r: r["step"]), "lr", x_key)
        if x:
            lr_ax.plot(x, y, color=c, label=name)
    panels = ((loss_ax, "loss", "loss"), (acc_ax, "accuracy", None), (lr_ax, "learning rate", "lr"))
    for ax, title, name in panels:
        ax.set_title(title + (" (log scale)" if name in log else ""))
        ax.set_xlabel(x_label)
        if name in log:
            ax.set_yscale("log")  # matplotlib leaves out values <= 0 (an lr of 0)
        ax.grid(True, alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=8)
    if os.environ.get("TCC_PLOT_DESCRIBE"):  # for the tests: what was drawn
        print(json.dumps([{"title": ax.get_title(), "xlabel": ax.get_xlabel(),
                           "yscale": ax.get_yscale(),
                           "x": [[float(v) for v in line.get_xdata()] for line in ax.lines]}
                          for ax, _, _ in panels]))
    fig.tight_layout()
    try:
        fd, tmp = tempfile.mkstemp(prefix=".plot-", suffix=".png", dir=directory)
    except OSError as e:
        fail("-o %s: cannot write in '%s' (%s)" % (output, directory, e.strerror))
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        fig.savefig(tmp, dpi=100)
        os.replace(tmp, output)
    except OSError as e:
        os.unlink(tmp)
        fail("-o %s: cannot write it (%s)" % (output, e.strerror))
    except Exception as e:  # matplotlib on values it cannot lay out: no traceback
        os.unlink(tmp)
        fail("-o %s: matplotlib could not draw these curves (%s: %s)"
             % (output, type(e).__name__, e))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
