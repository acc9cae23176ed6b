#!/usr/bin/env python3
"""Compile time grows linearly with the model, and no faster.

Checks behaviour, not speed, so that it passes on a loaded machine:

1. A deep model is a table, not code: chains of 500 and of 2,000 nodes
   (linear + relu pairs from examples/fashion_mlp.json) generate the same
   functions (one per distinct op, codegen/common/StepWalker.cpp); only the
   tables grow, by under 1.5 KB per node.
2. The CPU time of `tcc compile` (its C++ compiler included) for the 2,000
   nodes is under 6 times that for 500 (4 is linear; the first compiler
   built 2,000 nodes 200 times slower than 500): a ratio measured in one
   run, each side the least of two interleaved compiles, CPU time rather
   than wall time, so other work on the machine does not move it.
3. `train.accumulate: 1000` is one micro-batch loop, not 1,000 copies: its
   source is under twice as long as that of accumulate 1.
4. Each trainer runs a step and evaluates. Every command has a generous
   hang guard (10 minutes; a few seconds idle).

`tcc compile --time-phases` prints where each compile's time went.

usage: compile_time.py TCC EXAMPLES_DIR WORK_DIR
"""
import json
import os
import re
import resource
import subprocess
import sys

HANG_GUARD = 600
FUNCTION = re.compile(r"^(?:\[\[[^\]]*\]\] )?(?:void|int|static) \w+\(", re.M)


def chain(base, nodes):
    model = json.loads(json.dumps(base))
    model["name"] = "deep_%d" % nodes
    graph = [{"name": "flatten", "op": "flatten"},
             {"name": "fc0", "op": "linear", "out_features": 32}]
    i = 0
    while len(graph) < nodes:
        graph += [{"name": "relu%d" % i, "op": "relu"},
                  {"name": "fc%d" % (i + 1), "op": "linear", "out_features": 32}]
        i += 1
    graph.append({"name": "out", "op": "linear", "out_features": 10})
    model["graph"] = graph
    return model


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def compile_model(tcc, path, out, extra=()):
    """The CPU seconds of one `tcc compile` and its children, and its stderr."""
    before = children_cpu()
    r = subprocess.run([tcc, "compile", path, "--target=cpu", "--march=x86-64",
                        "--time-phases", "-o", out, *extra],
                       capture_output=True, text=True, timeout=HANG_GUARD)
    if r.returncode != 0:
        raise SystemExit("FAIL: tcc compile %s:\n%s" % (path, r.stderr))
    return children_cpu() - before, r.stderr.strip()


def source(tcc, path):
    r = subprocess.run([tcc, "compile", path, "--target=cpu", "--emit=source", "-o", "-"],
                       capture_output=True, text=True, timeout=HANG_GUARD)
    if r.returncode != 0:
        raise SystemExit("FAIL: tcc compile --emit=source %s:\n%s" % (path, r.stderr))
    return r.stdout


def main():
    tcc, examples, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    base = json.load(open(os.path.join(examples, "fashion_mlp.json")))
    models = {}
    for nodes in (500, 2000):
        models[nodes] = chain(base, nodes)
    accumulate = json.loads(json.dumps(base))
    accumulate["name"] = "accumulate_1000"
    accumulate["train"].update(batch_size=1, accumulate=1000)
    single = json.loads(json.dumps(accumulate))
    single["name"] = "accumulate_1"
    single["train"].update(accumulate=1)
    paths = {}
    for key, model in list(models.items()) + [("acc", accumulate), ("acc1", single)]:
        paths[key] = os.path.join(work, model["name"] + ".json")
        json.dump(model, open(paths[key], "w"))
    failures = []

    sources = {n: source(tcc, paths[n]) for n in (500, 2000)}
    functions = {n: FUNCTION.findall(sources[n]) for n in sources}
    print("functions: %d for 500 nodes, %d for 2,000" % (len(functions[500]),
                                                         len(functions[2000])))
    if functions[500] != functions[2000]:
        failures.append("the 2,000-node chain generates other functions than the 500-node "
                        "one: %s" % sorted(set(functions[2000]) - set(functions[500]))[:5])
    per_node = (len(sources[2000]) - len(sources[500])) / 1500
    print("source: %d bytes for 500 nodes, %d for 2,000: %.0f bytes per node"
          % (len(sources[500]), len(sources[2000]), per_node))
    if per_node > 1500:
        failures.append("the source grows by %.0f bytes per node (limit 1500)" % per_node)

    lengths = {k: len(source(tcc, paths[k]).splitlines()) for k in ("acc", "acc1")}
    print("accumulate 1000: %d lines, accumulate 1: %d" % (lengths["acc"], lengths["acc1"]))
    if lengths["acc"] > 2 * lengths["acc1"]:
        failures.append("accumulate 1000 generates %d lines, accumulate 1 %d"
                        % (lengths["acc"], lengths["acc1"]))

    seconds = {500: [], 2000: []}
    for _ in range(2):
        for nodes in (500, 2000):
            cpu, phases = compile_model(tcc, paths[nodes], os.path.join(work, "deep_%d" % nodes))
            seconds[nodes].append(cpu)
            print("deep_%d: %.1f CPU s (%s)" % (nodes, cpu, phases))
    ratio = min(seconds[2000]) / min(seconds[500])
    print("CPU time of 2,000 nodes / 500 nodes: %.2f (linear: 4, limit 6)" % ratio)
    if ratio >= 6:
        failures.append("compile time grows faster than linearly: ratio %.2f" % ratio)

    cpu, phases = compile_model(tcc, paths["acc"], os.path.join(work, "accumulate_1000"))
    print("accumulate_1000: %.1f CPU s (%s)" % (cpu, phases))
    for name in ("deep_2000", "accumulate_1000"):
        run = subprocess.run([os.path.join(work, name), "--steps", "1"],
                             capture_output=True, text=True, timeout=HANG_GUARD)
        if run.returncode != 0 or '"step":1' not in run.stdout:
            failures.append("%s --steps 1 failed:\n%s%s" % (name, run.stdout, run.stderr))
    for failure in failures:
        print("FAIL: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
