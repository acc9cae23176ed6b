"""Checks a `tcc compile --emit=conv-plans` table against its model.

usage: check_conv_plans.py TABLE.json MODEL.json GPU SM

Every convolution node of the model must have a forward plan, and a
backward-filter plan when its weight trains; every row must name a real
engine configuration (the plan's name agrees with the engine and knobs),
fit the workspace limit, and come from the GPU asked for. Prints one line
per direction and "ok" when all holds; exits 1 otherwise.
"""
import json
import re
import sys

table_path, model_path, gpu, sm = sys.argv[1:5]
table = json.load(open(table_path))
model = json.load(open(model_path))
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


check(table["format"] == "tcc-conv-plans/1", "format")
check(table["gpu"] == gpu, "gpu %s, asked %s" % (table["gpu"], gpu))
check(table["sm"] == int(sm), "sm %s" % table["sm"])
check(table["cudnn_version"] >= 90800, "cuDNN older than 9.8")
check(table["model"] == model["name"], "model name")
limit = table["workspace_limit_bytes"]
prefix = {"forward": "fwd ", "backward-data": "bwd-data ", "backward-filter": "bwd-filter "}
seen = set()
by_direction = {d: set() for d in prefix}
for row in table["convs"]:
    key = row["problem"]
    check(key not in seen, "problem listed twice: " + key)
    seen.add(key)
    check(key.startswith(prefix[row["direction"]]), "direction of " + key)
    check(row["engine"] >= 0, "no engine for " + key)
    tag = "eng%d" % row["engine"] + "".join(
        "_k%s=%d" % (k, v) for k, v in sorted(row["knobs"].items(), key=lambda kv: int(kv[0])))
    check(row["plan"] == tag, "plan %s does not match engine and knobs %s" % (row["plan"], tag))
    check(0 <= row["workspace_bytes"] <= limit, "workspace of " + key)
    check(0 <= row["rank"] < row["candidates"], "rank of " + key)
    check(row["nodes"], "no node for " + key)
    dtype = key.split()[1]
    check(("TENSOR_CORE" in row["numeric_notes"]) <= (dtype != "f32"),
          "an f32 convolution on tensor cores (TF32): " + key)
    check("NONDETERMINISTIC" not in row["numeric_notes"],
          "a nondeterministic engine (runs would not repeat): " + key)
    by_direction[row["direction"]].update(row["nodes"])

for node in model["graph"]:
    if node.get("op") != "conv2d":
        continue
    name = node["name"]
    check(name in by_direction["forward"], "no forward plan for " + name)
    weight = node.get("weight")
    trains = not (isinstance(weight, dict) and weight.get("trainable") is False)
    if trains:
        check(name in by_direction["backward-filter"], "no backward-filter plan for " + name)

for direction, nodes in by_direction.items():
    print("%s: %d nodes" % (direction, len(nodes)))
if failures:
    for f in failures:
        print("FAIL: " + f)
    sys.exit(1)
print("ok: %d convolution problems on the %s" % (len(table["convs"]), gpu))
