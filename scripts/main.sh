#!/usr/bin/env bash
# The main command: installs what is missing, builds tcc, compiles the
# embedded default model (an MLP for Fashion-MNIST, from Debian's
# dataset-fashion-mnist) into a CPU trainer, and trains it for one epoch.
# Metrics are printed as JSON lines. Another model: scripts/main.sh MODEL.json
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh tcc
model=${1:-examples/fashion_mlp.json}
name=$(basename "$model" .json)
mkdir -p build/trainers
build/bin/tcc compile "$model" --target=cpu -o "build/trainers/$name"
echo "tcc: compiled $model -> build/trainers/$name" >&2
exec "build/trainers/$name" --epochs "${EPOCHS:-1}"
