#!/usr/bin/env python3
"""Compile time grows linearly with the model (issue 7, item 9).

Builds two trainers from examples/fashion_mlp.json and fails if either takes
longer than the limit: one with train.accumulate = 1000 (the micro-batches
are one tcc.micro_batches loop, not 1000 copies) and one 2,000-node model
(1,000 linear + relu pairs: each distinct op is one C++ function, the step a
sequence of small parts). Both took 2-7 s on the 2-core CI machine; before,
the first took 200 s and the second did not finish in 10 minutes.

usage: compile_time.py TCC EXAMPLES_DIR WORK_DIR [LIMIT_SECONDS]
"""
import json
import os
import subprocess
import sys
import time


def main():
    tcc, examples, work = sys.argv[1:4]
    limit = float(sys.argv[4]) if len(sys.argv) > 4 else 45.0
    os.makedirs(work, exist_ok=True)
    base = json.load(open(os.path.join(examples, "fashion_mlp.json")))

    accumulate = json.loads(json.dumps(base))
    accumulate["name"] = "accumulate_1000"
    accumulate["train"].update(batch_size=1, accumulate=1000)

    deep = json.loads(json.dumps(base))
    deep["name"] = "deep_2000"
    graph = [{"name": "flatten", "op": "flatten"},
             {"name": "fc0", "op": "linear", "out_features": 32}]
    i = 0
    while len(graph) < 2000:
        graph += [{"name": "relu%d" % i, "op": "relu"},
                  {"name": "fc%d" % (i + 1), "op": "linear", "out_features": 32}]
        i += 1
    graph.append({"name": "out", "op": "linear", "out_features": 10})
    deep["graph"] = graph

    failed = False
    for model in (accumulate, deep):
        path = os.path.join(work, model["name"] + ".json")
        json.dump(model, open(path, "w"))
        out = os.path.join(work, model["name"])
        start = time.monotonic()
        r = subprocess.run([tcc, "compile", path, "--target=cpu", "--march=x86-64", "-o", out],
                           capture_output=True, text=True, timeout=10 * limit)
        seconds = time.monotonic() - start
        print("%s: %d nodes, accumulate %d: %.1f s (limit %.0f s)"
              % (model["name"], len(model["graph"]),
                 model["train"].get("accumulate", 1), seconds, limit))
        if r.returncode != 0:
            print(r.stderr)
            failed = True
        elif seconds > limit:
            failed = True
        else:
            # The trainer runs one step on Fashion-MNIST and evaluates.
            run = subprocess.run([out, "--steps", "1"],
                                 capture_output=True, text=True)
            if run.returncode != 0 or '"step":1' not in run.stdout:
                print("%s --steps 1 failed:\n%s%s" % (out, run.stdout, run.stderr))
                failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
