#!/usr/bin/env bash
# Writes what tcc generates for every example and test model into DIR:
# the planned IR, the source and the report on both targets, under each
# precision, and the cuda conv plans. A refactoring that must not change
# the generated code compares two snapshots with `diff -r`.
#   scripts/codegen-snapshot.sh DIR [TCC]
set -euo pipefail
out=${1:?usage: scripts/codegen-snapshot.sh DIR [TCC]}
tcc=${2:-build/bin/tcc}
cd "$(dirname "$0")/.."
mkdir -p "$out"
for model in examples/*.json test/e2e/models/*.json test/runtime/cuda/models/*.json; do
  name=$(basename "$model" .json)
  for target in cpu cuda; do
    for precision in fp32 bf16-mixed fp16; do
      base="$out/$name.$target.$precision"
      args=(compile "$model" --target="$target" --precision="$precision")
      "$tcc" "${args[@]}" --emit=planned-mlir -o "$base.mlir" 2>"$base.err" || true
      "$tcc" "${args[@]}" --emit=source -o "$base.src" --report="$base.report.json" 2>>"$base.err" || true
      # The report names temporaries and times: keep what does not vary.
      [ -f "$base.report.json" ] && python3 - "$base.report.json" <<'PY'
import json, sys
path = sys.argv[1]
def drop(x):
    if isinstance(x, dict):
        return {k: drop(v) for k, v in x.items() if not any(s in k for s in ("seconds", "time", "_ms", "path"))}
    if isinstance(x, list):
        return [drop(v) for v in x]
    return x
r = drop(json.load(open(path)))
json.dump(r, open(path, "w"), indent=1, sort_keys=True)
PY
    done
  done
  "$tcc" compile "$model" --emit=conv-plans -o "$out/$name.conv-plans.json" 2>"$out/$name.conv-plans.err" || true
done
echo "snapshot of $(ls "$out" | wc -l) files in $out"
