#!/usr/bin/env bash
# Installs every dependency Loom needs on a fresh Debian 12 machine:
# the LLVM/MLIR 22 toolchain, libonnx + protobuf, FlatBuffers, nlohmann-json,
# BLIS, GoogleTest, Open MPI (for sweeps over many machines), Debian's PyTorch/ONNX for the model-export scripts,
# and onnxruntime-node (from npm) as the numerics peer.
# Idempotent: a second run on a set-up machine takes a few seconds.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

packages=(
  build-essential cmake ninja-build ccache git pkg-config
  clang-22 lld-22 llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  libclang-rt-22-dev
  zlib1g-dev libzstd-dev libedit-dev libcurl4-openssl-dev libxml2-dev
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  flatbuffers-compiler libflatbuffers-dev nlohmann-json3-dev libxxhash-dev
  libblis-serial-dev libgtest-dev libgmock-dev
  python3 python3-dev python3-numpy python3-onnx python3-torch python3-torchvision
  pybind11-dev chromium openmpi-bin libopenmpi-dev
  nodejs
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ONNX Runtime for Node is the numerics and speed peer. Its postinstall tries
# to download a GPU build, which this environment cannot reach; skip it.
if [ ! -d "$here/scripts/ort/node_modules/onnxruntime-node" ]; then
  echo "setup: installing onnxruntime-node"
  (cd "$here/scripts/ort" && ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip \
     npm ci --no-audit --no-fund --loglevel=error 2>/dev/null ||
   cd "$here/scripts/ort" && ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip \
     npm install --no-audit --no-fund --loglevel=error)
fi
echo "setup: all dependencies present"
