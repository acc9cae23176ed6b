#!/usr/bin/env python3
"""./train --profile of a cpu trainer of 2 ranks (docs/training.md,
"Profiling a step"; docs/distributed.md): its collectives are blocking MPI
calls, so each one's communication time is its site's and none of it is
hidden.

  test_profile.py TCC WORK

- sync_bn_cnn (batch norms synchronised over the ranks, the running
  statistics averaged, the gradients in buckets of 4 KiB) under mpirun -np 2,
  4 steps with and without --profile: the same checkpoint bit for bit;
  rank 0's profile passes test/trainer/check_profile.py against the compile
  report (every collective listed with its bucket and bytes, the report's
  buckets in order, hidden 0 and exposed the whole on the step's stream,
  the totals the rows' sums), with several buckets and the norms' sums;
- the same with 2 micro-batches a step: the norms' sums run twice a step;
- the check can fail: a profile with a collective row left out, one with
  more hidden than its time, one without the communication object, each
  fail it.
Exit 77 (skipped) without Open MPI.
"""
import copy
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(ROOT, "test", "trainer"))
import check_profile  # noqa: E402
from test_ranks import FAILURES, MODELS, check, mpirun, prepare, run, variant  # noqa: E402

STEPS = 4


def profiled(tcc, work, data, model, *flags):
    """Compiles `model` for 2 ranks with a report and trains it with and
    without --profile: (profile, report), or None."""
    exe, report = os.path.join(work, model), os.path.join(work, model + "-report.json")
    r = run([tcc, "compile", MODELS[model], "--target=cpu", "--ranks=2", "-o", exe,
             "--report", report, *flags])
    if r.returncode != 0 and "needs MPI" in r.stderr:
        print("SKIP: " + r.stderr.strip())
        sys.exit(77)
    if not check(r.returncode == 0, f"tcc compile {model}: {r.stderr.strip()}"):
        return None
    saved = {}
    for name, extra in (("plain", []), ("profiled", ["--profile", exe + "-profile.json"])):
        save = os.path.join(work, f"{model}-{name}.safetensors")
        # (Not --quiet: it leaves out the profile's summary.)
        r = run(mpirun(2) + [exe, "--data", data, "--steps", str(STEPS), "--seed", "3",
                             "--save", save, *extra])
        if not check(r.returncode == 0, f"{model} {name}: exit {r.returncode}: "
                     f"{r.stderr[-2000:]}"):
            return None
        with open(save, "rb") as f:
            saved[name] = f.read()
        if name == "profiled":
            check("profile: communication " in r.stderr,
                  f"{model}: the summary has no communication line: {r.stderr[-1000:]}")
    check(saved["plain"] == saved["profiled"],
          f"{model}: the profiled run's checkpoint differs from the plain run's")
    with open(exe + "-profile.json") as f, open(report) as g:
        return json.load(f), json.load(g)


def check_run(model, profile, report, micro=1):
    failures = check_profile.check(profile, report, STEPS - 1, micro)
    for failure in failures:
        check(False, f"{model}: {failure}")
    rows = profile["communication"]["collectives"]
    buckets = [r for r in rows if r["bucket"] is not None]
    sums = [r for r in rows if r["bucket"] is None]
    check(len(buckets) >= 2, f"{model}: {len(buckets)} buckets, expected several")
    check(any(r["calls_per_step"] == micro and r["node"] for r in sums),
          f"{model}: no norm's sums {micro} times a step")
    check(profile["communication"]["hidden_ms_per_step"] == 0,
          f"{model}: the cpu target hid some communication")
    if not failures:
        print(f"{model}: {len(rows)} collectives ({len(buckets)} buckets), "
              f"{profile['communication']['ms_per_step']:.3f} ms per step, none hidden",
              flush=True)
    return not failures


def main():
    tcc, work = sys.argv[1], sys.argv[2]
    data = prepare(work)
    if data is None:
        return 77
    variant(work, "sync_bn_cnn", "sync_bn_cnn_accumulate", accumulate=2)
    got = profiled(tcc, work, data, "sync_bn_cnn", "--bucket-size=4KiB")
    if got and check_run("sync_bn_cnn", *got):
        profile, report = got
        # The check fails where the profile is wrong.
        dropped = copy.deepcopy(profile)
        del dropped["communication"]["collectives"][0]
        too_hidden = copy.deepcopy(profile)
        row = too_hidden["communication"]["collectives"][-1]
        row["hidden_ms_per_step"] = row["ms_per_step"] + 1
        missing = copy.deepcopy(profile)
        del missing["communication"]
        for name, wrong in (("a row left out", dropped), ("more hidden than its time",
                                                          too_hidden),
                            ("no communication", missing)):
            check(check_profile.check(wrong, report, STEPS - 1) != [],
                  f"check_profile passes a profile with {name}")
    got = profiled(tcc, work, data, "sync_bn_cnn_accumulate", "--bucket-size=4KiB")
    if got:
        check_run("sync_bn_cnn_accumulate", *got, micro=2)
    print("FAIL" if FAILURES else "PASS")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
