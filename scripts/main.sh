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
# Data sets that an example reads and no package ships as such: written once
# from what a package does ship (docs/training.md).
if [ "$name" = char_lm ] && [ ! -f data/fortunes/train_x.npy ]; then
  python3 scripts/text_to_npy.py /usr/share/games/fortunes/{fortunes,literature,riddles} \
    data/fortunes --seq-len 64 --stride 16 >/dev/null
  echo "tcc: wrote data/fortunes from Debian's fortunes-min" >&2
fi
mkdir -p build/trainers
build/bin/tcc compile "$model" --target=cpu -o "build/trainers/$name"
echo "tcc: compiled $model -> build/trainers/$name" >&2
exec "build/trainers/$name" --epochs "${EPOCHS:-1}"
