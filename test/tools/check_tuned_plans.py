"""Checks that a conv-plans table baked the tuning file's choices.

usage: check_tuned_plans.py TABLE.json TUNING.json
Every problem the tuning file lists must be baked with its plan and say
"chosen_by": "tuning" with the file's time; every other problem
"heuristics". Likewise every matmul the file lists must be baked with its
algorithm, every other one left to cuBLASLt's heuristic. Prints "ok: T
tuned, H heuristic; M matmuls tuned, N heuristic"; exits 1 otherwise.
"""
import json
import sys

table = json.load(open(sys.argv[1]))
tuning = {c["problem"]: c for c in json.load(open(sys.argv[2]))["convs"]}
failures, tuned = [], 0
for row in table["convs"]:
    want = tuning.get(row["problem"])
    if want:
        tuned += 1
        if (row["plan"], row["chosen_by"], row.get("tuned_microseconds")) != (
                want["plan"], "tuning", want["microseconds"]):
            failures.append("%s: baked %s (%s), the tuning file says %s" % (
                row["problem"], row["plan"], row["chosen_by"], want["plan"]))
    elif row["chosen_by"] != "heuristics":
        failures.append("%s: chosen by %s, not in the tuning file" % (
            row["problem"], row["chosen_by"]))
tuned_matmuls = {m["problem"]: m for m in json.load(open(sys.argv[2])).get("matmuls", [])}
matmuls_tuned = 0
for row in table["matmuls"]:
    want = tuned_matmuls.get(row["problem"])
    if want:
        matmuls_tuned += 1
        if (row["algo"], row["chosen_by"], row.get("tuned_microseconds")) != (
                want["algo"], "tuning", want["microseconds"]):
            failures.append("%s: baked %s (%s), the tuning file says %s" % (
                row["problem"], row["algo"], row["chosen_by"], want["algo"]))
    elif (row["algo"], row["chosen_by"]) != (None, "heuristic at the first step"):
        failures.append("%s: chosen by %s, not in the tuning file" % (
            row["problem"], row["chosen_by"]))
for f in failures:
    print("FAIL", f)
print("ok: %d tuned, %d heuristic; %d matmuls tuned, %d heuristic" % (
    tuned, len(table["convs"]) - tuned, matmuls_tuned, len(table["matmuls"]) - matmuls_tuned)
    if not failures else "failed")
sys.exit(1 if failures else 0)
