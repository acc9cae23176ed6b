#!/usr/bin/env bash
# Installs the Debian packages tcc needs to build and test, if missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  nlohmann-json3-dev libgtest-dev zlib1g-dev
  dataset-fashion-mnist
  python3-torch python3-numpy python3-jsonschema python3-matplotlib
)

# The cuDNN frontend (header-only C++ graph API) for the cuda target's
# convolution plans: PyPI's nvidia-cudnn-frontend wheel carries the headers.
# Pinned; unpacked into .deps/ (ignored by git) where CMake looks for it.
cudnn_frontend_version=1.32.0
cudnn_frontend_dir=.deps/cudnn-frontend-$cudnn_frontend_version
if [ -x /usr/local/cuda/bin/nvcc ] && [ ! -f "$cudnn_frontend_dir/include/cudnn_frontend.h" ]; then
  echo "tcc setup: fetching the cuDNN frontend $cudnn_frontend_version headers (PyPI)" >&2
  wheels=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 \
    --platform manylinux_2_28_x86_64 -d "$wheels" \
    "nvidia-cudnn-frontend==$cudnn_frontend_version"
  python3 - "$wheels" "$cudnn_frontend_dir" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    z.extractall(sys.argv[2] + ".tmp", [n for n in z.namelist() if n.startswith("include/")])
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
PY
  rm -rf "$wheels"
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "tcc setup: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
