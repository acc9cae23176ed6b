#!/usr/bin/env python3
"""fuzz_metrics.py: seeded mutations of metrics files through `tcc plot`.

usage: fuzz_metrics.py PLOT_METRICS.py [--cases N] [--seed S] [--draw-every K]
                       [--case I [--print]] [--verbose]

Each case is a metrics file as a trainer writes it (epoch and step records),
mutated one to three times the way a file gets damaged or hand-edited: values
replaced by huge, negative, non-finite, null, list, object, string or boolean
ones, fields dropped or added, records duplicated, reordered, deleted or cut
short, bytes damaged (invalid UTF-8, NUL). It goes through tcc plot's reader
(plot_metrics.read_run) and its series, in this process, so that thousands
take seconds; every K-th case is drawn whole (plot_metrics.main, matplotlib).
Every case must read (warnings allowed) or end in exactly one "error:" line
that names the file; a Python exception (a traceback for the user) fails the
test and prints the case and how to reproduce it (docs/testing.md).
"""
import argparse
import contextlib
import importlib.util
import io
import json
import os
import random
import shutil
import sys
import tempfile

HUGE = [1e308, -1e308, 3.5e38, -3.5e38, 1e39, 2 ** 63, -(2 ** 63), 2 ** 1000, 0, -1, 0.5,
        1e-320, "NaN", "Infinity", "-Infinity", None, [], [1, 2], {}, {"a": 1}, "abc",
        "1.5", True, False, "x" * 10000, [[[[[]]]]]]
FIELDS = ["type", "epoch", "step", "train_loss", "train_acc", "test_loss", "test_acc", "lr",
          "elapsed_s", "epoch_seconds", "images_per_second", "final"]


def base_records(rng):
    """A run as a trainer writes it: step records every few steps, an epoch
    record at each epoch's end."""
    records, per_epoch = [], rng.choice([4, 10, 100])
    loss, lr, t = 2.3, 0.1, 0.0
    for epoch in range(1, rng.randint(1, 4) + 1):
        for k in range(1, 3):
            step = (epoch - 1) * per_epoch + k * per_epoch // 2
            t += 1.5
            loss *= 0.8
            records.append({"type": "step", "epoch": step / per_epoch, "step": step,
                            "train_loss": loss, "train_acc": 1 - loss / 3, "lr": lr,
                            "elapsed_s": t, "images_per_second": 1000.0})
        records.append({"type": "epoch", "epoch": epoch, "step": epoch * per_epoch,
                        "train_loss": loss, "train_acc": 1 - loss / 3, "test_loss": loss * 1.1,
                        "test_acc": 1 - loss / 2.5, "lr": lr, "elapsed_s": t,
                        "epoch_seconds": 3.0, "eval_seconds": 0.2, "images_per_second": 1000.0})
        lr *= 0.5
    records[-1]["final"] = True
    return records


def mutate(records, rng):
    """One to three mutations; returns (file bytes, what was done)."""
    lines = [json.dumps(r) for r in records]
    what = []
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines)) if lines else 0
        kind = rng.randrange(9)
        if not lines:
            lines.append("")
            what.append("empty line")
            continue
        try:
            record = json.loads(lines[i])
        except ValueError:
            record = None
        if kind <= 2 and isinstance(record, dict):
            field = rng.choice(FIELDS)
            value = rng.choice(HUGE)
            record[field] = value
            lines[i] = json.dumps(record)
            what.append("line %d: %s = %s" % (i + 1, field, json.dumps(value)[:30]))
        elif kind == 3 and isinstance(record, dict):
            field = rng.choice(FIELDS)
            record.pop(field, None)
            lines[i] = json.dumps(record)
            what.append("line %d: %s dropped" % (i + 1, field))
        elif kind == 4:
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
            what.append("line %d duplicated" % (i + 1))
        elif kind == 5:
            del lines[i]
            what.append("line %d deleted" % (i + 1))
        elif kind == 6:
            rng.shuffle(lines)
            what.append("lines shuffled")
        elif kind == 7:
            lines[i] = lines[i][:rng.randrange(len(lines[i]) + 1)]
            what.append("line %d cut short" % (i + 1))
        else:
            lines[i] = rng.choice(["[]", "null", "42", "\"text\"", "{}", "   ", "{\"epoch\": 1}",
                                   json.dumps(rng.choice(HUGE))])
            what.append("line %d replaced by another JSON value" % (i + 1))
    data = bytearray("\n".join(lines).encode())
    if data and rng.random() < 0.1:
        at = rng.randrange(len(data))
        data[at] = rng.choice([0x00, 0xff, 0xc3, 0x80, 0x0a, 0x22, 0x7b])
        what.append("byte %d damaged" % at)
    return bytes(data), "; ".join(what)


def problem(status, err, path):
    """What is wrong with a case's stderr and exit status, or ""."""
    lines = err.splitlines()
    if "Traceback" in err:
        return "a traceback"
    for line in lines:
        if not line.startswith(("error: ", "warning: ")):
            return "a line that is neither an error nor a warning: %s" % line[:200]
        if path not in line and not line.startswith("error: -o "):
            return "a message that does not name the file: %s" % line[:200]
    errors = [l for l in lines if l.startswith("error: ")]
    if status not in (0, 1):
        return "exit status %s" % status
    if status == 1 and len(errors) != 1:
        return "%d error lines" % len(errors)
    if status == 0 and errors:
        return "an error line but exit status 0"
    return ""


def run_case(plot, path, png, draw):
    """(exit status, stderr) of tcc plot's reader (and the drawing) on `path`."""
    err = io.StringIO()
    status = 0
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            if draw:
                status = plot.main([path, "-o", png, "--log", "loss,lr"])
            else:
                epochs, steps = plot.read_run(path)
                for x_key in ("epoch", "step", "elapsed_s"):
                    for key in ("train_loss", "test_loss", "train_acc", "test_acc", "lr"):
                        plot.series(steps + epochs, key, x_key)
    except SystemExit as e:
        status = e.code
    except Exception as e:  # the failure this test looks for
        import traceback
        err.write("Traceback (an uncaught %s: %s)\n%s" % (type(e).__name__, e,
                                                         traceback.format_exc()))
    return status, err.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plot_metrics")
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--draw-every", type=int, default=200)
    ap.add_argument("--case", type=int)
    ap.add_argument("--print", action="store_true")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("plot_metrics", args.plot_metrics)
    plot = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plot)

    cases = [args.case] if args.case is not None else range(args.cases)
    work = tempfile.mkdtemp(prefix="tcc-fuzz-metrics-")
    failures = 0
    try:
        path, png = os.path.join(work, "run.jsonl"), os.path.join(work, "curves.png")
        for i in cases:
            rng = random.Random(args.seed * 1000003 + i)
            data, what = mutate(base_records(rng), rng)
            if args.print:
                sys.stdout.buffer.write(data)
                return 0
            with open(path, "wb") as f:
                f.write(data)
            draw = args.draw_every > 0 and i % args.draw_every == 0
            status, err = run_case(plot, path, png, draw)
            why = problem(status, err, path)
            if args.verbose or why:
                print("case %d (%s)%s: %s" % (i, what, " drawn" if draw else "",
                                              err.strip()[:300] or "read"))
            if why:
                failures += 1
                print("  FAILED: %s\n  reproduce: %s %s --seed %d --case %d --print > case.jsonl"
                      "; tcc plot case.jsonl -o case.png"
                      % (why, sys.argv[0], args.plot_metrics, args.seed, i))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("fuzz_metrics: %d cases (seed %d): %d failed" % (len(cases), args.seed, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
