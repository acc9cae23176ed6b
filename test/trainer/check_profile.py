#!/usr/bin/env python3
"""Checks the file of `./train --profile` against the compile report of the
same trainer (`tcc compile --report`).

- Every kernel of the training step is a site, once per micro-batch: the
  sites other than the batch's gather, the micro-batch sums and the step's
  end are the report's kernels_per_step.after_fusion, in the report's order
  of op kinds (a fusion group's ops are one site, named after its kind).
- The numbers add up: a site's share is its time over the step's, the
  shares sum to 1, step_ms is the sites' sum, the per-kind rows sum the
  sites and are sorted, no time is negative.
- The communication: every collective site has its row, and no other; the
  rows' calls and bytes are the report's per kind of collective, their
  buckets the report's gradient_buckets, in order, with the same bytes;
  hidden is at most the collective's time and exposed the rest; one on
  the step's stream hides nothing and takes its site's time; a bucket on
  the side stream was timed there once per call of its site; the totals
  are the rows' sums. Never the times' values (wall-clock).

usage: check_profile.py PROFILE.json REPORT.json [--steps N] [--micro K]
                        [--side-stream N]
"""
import argparse
import json
import math
import sys

STEP_SITES = {"gather_batch", "micro_batch_sums", "step_end"}
COLLECTIVES = {"tcc.all_reduce": "all_reduce", "tcc.all_gather": "all_gather",
               "tcc.reduce_scatter": "reduce_scatter"}
CLOSE = dict(rel_tol=1e-9, abs_tol=1e-9)


def expected_kinds(report):
    """The report's training-step ops as the profile names their kernels:
    one per op outside a group, one per group, in order."""
    kinds, seen_groups = [], set()
    for op in report["ops"]["train_step"]:
        group = op.get("group")
        if group is None:
            kinds.append("tcc." + op["op"])
        elif group not in seen_groups:
            seen_groups.add(group)
            kinds.append("fusion_group:" + op["group_kind"])
    return kinds


def check_communication(profile, report, side_stream=None):
    """The `communication` object against the sites and the report."""
    failures = []
    comm = profile.get("communication")
    if not isinstance(comm, dict):
        return ["no communication object"]
    for key in ("ms_per_step", "hidden_ms_per_step", "exposed_ms_per_step", "hidden_share",
                "collectives"):
        if key not in comm:
            failures.append(f"communication has no {key}")
    if failures:
        return failures
    sites, rows = profile["sites"], comm["collectives"]
    expected = [s["site"] for s in sites if s["op"] in COLLECTIVES]
    if [r["site"] for r in rows] != expected:
        failures.append(f"collective rows at sites {[r['site'] for r in rows]}, "
                        f"the collective sites are {expected}")
        return failures
    for r in rows:
        site = sites[r["site"]]
        name = f"collective at site {r['site']}"
        for key in ("op", "node"):
            if r[key] != site[key]:
                failures.append(f"{name}: {key} {r[key]!r}, its site's {site[key]!r}")
        if r["stream"] not in ("step", "side"):
            failures.append(f"{name}: stream {r['stream']!r}")
        if not 0 <= r["hidden_ms_per_step"] <= r["ms_per_step"] * (1 + 1e-9):
            failures.append(f"{name}: hidden {r['hidden_ms_per_step']} ms of "
                            f"{r['ms_per_step']} ms")
        if not math.isclose(r["exposed_ms_per_step"],
                            r["ms_per_step"] - r["hidden_ms_per_step"], **CLOSE):
            failures.append(f"{name}: exposed is not the time less the hidden part")
        if r["calls_per_step"] != site["calls_per_step"]:
            failures.append(f"{name}: {r['calls_per_step']} timed calls per step, its site "
                            f"{site['calls_per_step']}")
        if r["stream"] == "step" and (
                r["hidden_ms_per_step"] != 0
                or not math.isclose(r["ms_per_step"], site["ms_per_step"], **CLOSE)):
            failures.append(f"{name}: on the step's stream, but not its site's time, "
                            "all exposed")
        if r["bytes"] <= 0:
            failures.append(f"{name}: {r['bytes']} bytes")
    if profile["target"] == "cpu" and any(r["stream"] != "step" for r in rows):
        failures.append("a cpu collective on a side stream")
    sides = sum(r["stream"] == "side" for r in rows)
    if side_stream is not None and sides != side_stream:
        failures.append(f"{sides} collectives on the side stream, expected {side_stream}")
    for key in ("ms_per_step", "hidden_ms_per_step", "exposed_ms_per_step"):
        if not math.isclose(comm[key], sum(r[key] for r in rows), **CLOSE):
            failures.append(f"communication {key} is not the rows' sum")
    share = comm["hidden_ms_per_step"] / comm["ms_per_step"] if comm["ms_per_step"] else 0
    if not math.isclose(comm["hidden_share"], share, **CLOSE):
        failures.append("hidden_share is not hidden over the communication time")
    # The report's collectives (none without a distributed section).
    dist = report.get("distributed")
    for kind, key in COLLECTIVES.items():
        mine = [r for r in rows if r["op"] == kind]
        calls = sum(r["calls_per_step"] for r in mine)
        sent = sum(r["calls_per_step"] * r["bytes"] for r in mine)
        want = dist[key] if dist else {"collectives": 0, "bytes_per_step": 0}
        if calls != want["collectives"] or sent != want["bytes_per_step"]:
            failures.append(f"{key}: {calls} calls and {sent} bytes per step, the report "
                            f"says {want['collectives']} and {want['bytes_per_step']}")
    buckets = [r for r in rows if r["bucket"] is not None]
    want = dist["gradient_buckets"] if dist else []
    if [r["bucket"] for r in buckets] != list(range(len(want))):
        failures.append(f"buckets {[r['bucket'] for r in buckets]}, the report has "
                        f"{len(want)}")
    elif [r["bytes"] for r in buckets] != [b["bytes"] for b in want]:
        failures.append(f"bucket bytes {[r['bytes'] for r in buckets]}, the report's "
                        f"{[b['bytes'] for b in want]}")
    return failures


def check(profile, report, steps=None, micro=1, side_stream=None):
    failures = []
    sites = profile["sites"]
    if steps is not None and profile["steps"] != steps:
        failures.append(f"steps: {profile['steps']}, expected {steps}")
    kernels = [s for s in sites if s["op"] not in STEP_SITES]
    calls = sum(s["calls_per_step"] for s in kernels)
    if calls != report["kernels_per_step"]["after_fusion"]:
        failures.append(f"{calls} kernel calls per step, the report says "
                        f"{report['kernels_per_step']['after_fusion']}")
    # Ops the memory plan turned into a name for their input's bytes (views)
    # run no kernel: compare the kernels in order, views aside.
    expected = [k for k in expected_kinds(report)
                if k not in ("tcc.flatten", "tcc.reshape")]
    got = [s["op"] for s in kernels if s["op"] not in ("tcc.flatten", "tcc.reshape")]
    if got != expected:
        failures.append(f"the sites' ops {got} differ from the report's {expected}")
    if sites[0]["op"] != "gather_batch" or sites[-1]["op"] != "step_end":
        failures.append("the first site is not the gather or the last not the step's end")
    for s in sites:
        if s["ms_per_step"] < 0 or s["calls_per_step"] <= 0:
            failures.append(f"site {s['site']} ({s['op']}): {s['ms_per_step']} ms, "
                            f"{s['calls_per_step']} calls per step")
    if micro > 1 and not any(s["op"] == "micro_batch_sums" and s["calls_per_step"] == micro
                             for s in sites):
        failures.append(f"no micro-batch sums site called {micro} times per step")
    total = sum(s["ms_per_step"] for s in sites)
    if not math.isclose(total, profile["step_ms"], rel_tol=1e-9):
        failures.append(f"step_ms {profile['step_ms']} is not the sites' sum {total}")
    if total <= 0:
        failures.append("the step took no time")
    if not math.isclose(sum(s["share"] for s in sites), 1.0, rel_tol=1e-9):
        failures.append("the sites' shares do not sum to 1")
    ops = profile["ops"]
    if [o["ms_per_step"] for o in ops] != sorted((o["ms_per_step"] for o in ops), reverse=True):
        failures.append("the op rows are not sorted by time")
    for o in ops:
        mine = [s for s in sites if s["op"] == o["op"]]
        if not math.isclose(o["ms_per_step"], sum(s["ms_per_step"] for s in mine),
                            rel_tol=1e-9, abs_tol=1e-12):
            failures.append(f"the row of {o['op']} is not the sum of its sites")
    return failures + check_communication(profile, report, side_stream)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile")
    ap.add_argument("report")
    ap.add_argument("--steps", type=int)
    ap.add_argument("--micro", type=int, default=1)
    ap.add_argument("--side-stream", type=int,
                    help="the collectives expected on the side stream")
    args = ap.parse_args()
    with open(args.profile) as f:
        profile = json.load(f)
    with open(args.report) as f:
        report = json.load(f)
    failures = check(profile, report, args.steps, args.micro, args.side_stream)
    for failure in failures:
        print("FAIL: " + failure)
    if not failures:
        comm = profile["communication"]
        print(f"PASS: {len(profile['sites'])} sites, {profile['step_ms']:.3f} ms per step, "
              f"{len(comm['collectives'])} collectives")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
