#!/usr/bin/env bash
# Installs the Debian packages tcc needs to build and test, if missing.
set -euo pipefail

packages=(
  cmake ninja-build g++ python3
  llvm-19-dev llvm-19-tools libmlir-19-dev mlir-19-tools
  nlohmann-json3-dev libgtest-dev zlib1g-dev
  openmpi-bin libopenmpi-dev
  dataset-fashion-mnist fortunes-min
  python3-torch python3-torchvision python3-numpy python3-jsonschema python3-matplotlib
  python3-pip
)

# unpack_wheel DIR FROM=TO... -- PIP_ARGS...: the pinned PyPI wheel that
# `pip download PIP_ARGS` fetches, its folders FROM unpacked as DIR/TO (each
# ending in /), whole or not at all (a temporary folder, then one rename).
unpack_wheel() {
  local dir=$1 maps=()
  shift
  while [ "$1" != -- ]; do maps+=("$1"); shift; done
  shift
  local wheels
  wheels=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$wheels" "$@"
  python3 - "$wheels" "$dir" "${maps[@]}" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
tmp = sys.argv[2] + ".tmp"
trees = [m.split("=", 1) for m in sys.argv[3:]]
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        for prefix, to in trees:
            if name.startswith(prefix) and not name.endswith("/"):
                path = os.path.join(tmp, to + name[len(prefix):])
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with z.open(name) as src, open(path, "wb") as dst:
                    dst.write(src.read())
os.rename(tmp, sys.argv[2])
PY
  rm -rf "$wheels"
}

# The cuDNN frontend (header-only C++ graph API) for the cuda target's
# convolution plans: PyPI's nvidia-cudnn-frontend wheel carries the headers.
# Pinned; unpacked into .deps/ (ignored by git) where CMake looks for it.
cudnn_frontend_version=1.32.0
cudnn_frontend_dir=.deps/cudnn-frontend-$cudnn_frontend_version
if [ -x /usr/local/cuda/bin/nvcc ] && [ ! -f "$cudnn_frontend_dir/include/cudnn_frontend.h" ]; then
  echo "tcc setup: fetching the cuDNN frontend $cudnn_frontend_version headers (PyPI)" >&2
  unpack_wheel "$cudnn_frontend_dir" include/=include/ -- --python-version 3.11 \
    --platform manylinux_2_28_x86_64 "nvidia-cudnn-frontend==$cudnn_frontend_version"
fi

# CUTLASS (header-only CUDA templates): the implicit-GEMM convolutions
# tcc-tune times beside cuDNN's engines (docs/tuning.md, "CUTLASS"). PyPI's
# nvidia-cutlass wheel carries the headers: include/ (cutlass, cute) and
# tools/util/include/ (cutlass/util), as util/include/. Pinned, into .deps/.
cutlass_version=4.2.0.0
cutlass_dir=.deps/cutlass-$cutlass_version
if [ -x /usr/local/cuda/bin/nvcc ] && [ ! -f "$cutlass_dir/include/cutlass/cutlass.h" ]; then
  echo "tcc setup: fetching the CUTLASS $cutlass_version headers (PyPI)" >&2
  unpack_wheel "$cutlass_dir" cutlass_library/source/include/=include/ \
    cutlass_library/source/tools/util/include/=util/include/ -- \
    "nvidia-cutlass==$cutlass_version"
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -ne 0 ]; then
  echo "tcc setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python's safetensors (not packaged by Debian 12) from PyPI, for Debian's
# Python with its torch: how users load a checkpoint in PyTorch
# (docs/training.md), and what the interop tests check it with. Pinned.
# Without a network the tests that need it skip.
safetensors_version=0.8.0
if ! /usr/bin/python3 -c "import safetensors" 2>/dev/null; then
  echo "tcc setup: installing safetensors $safetensors_version for /usr/bin/python3 (PyPI)" >&2
  $sudo /usr/bin/python3 -m pip install -q --root-user-action=ignore --break-system-packages \
    "safetensors==$safetensors_version" ||
    echo "tcc setup: warning: safetensors could not be installed; its interop tests will skip" >&2
fi
