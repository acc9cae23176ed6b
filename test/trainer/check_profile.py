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

usage: check_profile.py PROFILE.json REPORT.json [--steps N] [--micro K]
"""
import argparse
import json
import math
import sys

STEP_SITES = {"gather_batch", "micro_batch_sums", "step_end"}


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


def check(profile, report, steps=None, micro=1):
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
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("profile")
    ap.add_argument("report")
    ap.add_argument("--steps", type=int)
    ap.add_argument("--micro", type=int, default=1)
    args = ap.parse_args()
    with open(args.profile) as f:
        profile = json.load(f)
    with open(args.report) as f:
        report = json.load(f)
    failures = check(profile, report, args.steps, args.micro)
    for failure in failures:
        print("FAIL: " + failure)
    if not failures:
        print(f"PASS: {len(profile['sites'])} sites, {profile['step_ms']:.3f} ms per step")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
