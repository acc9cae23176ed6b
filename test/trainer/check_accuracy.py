#!/usr/bin/env python3
"""check_accuracy.py TCC MODEL.json EPOCHS MIN_ACC: compiles MODEL with the cpu
target, trains it for EPOCHS epochs on its data set, and fails unless the
final test accuracy reaches MIN_ACC. Prints the metrics lines."""
import json
import os
import subprocess
import sys
import tempfile

tcc, model, epochs, minimum = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
with tempfile.TemporaryDirectory() as tmp:
    trainer = os.path.join(tmp, "train")
    subprocess.run([tcc, "compile", model, "--target=cpu", "-o", trainer], check=True)
    metrics = os.path.join(tmp, "metrics.jsonl")
    subprocess.run([trainer, "--epochs", epochs, "--quiet", "--metrics", metrics], check=True)
    lines = [json.loads(line) for line in open(metrics)]
for line in lines:
    print(json.dumps(line))
final = lines[-1]
if not final.get("final") or final["test_acc"] < minimum:
    sys.exit(f"test accuracy {final['test_acc']:.4f} after {epochs} epochs is below {minimum}")
print(f"ok: test accuracy {final['test_acc']:.4f} >= {minimum}")
