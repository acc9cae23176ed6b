#!/usr/bin/env bash
# The main command: installs what is missing, builds, and compiles the
# embedded default model (a CNN for Fashion-MNIST from Debian's
# dataset-fashion-mnist). Until the code generators exist this prints the
# verified tcc IR of the model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh tcc
model=${1:-examples/fashion_cnn.json}
build/bin/tcc compile "$model" --emit=mlir
