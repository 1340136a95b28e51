#!/usr/bin/env bash
# Sets up the machine, builds Loom, and runs the main job on the default
# model and target: exports a small CNN with random weights, compiles it for
# the tiny test chip, runs the program on the simulator (outputs, statistics,
# a Perfetto trace), checks it against the golden reference, and checks the
# golden reference against ONNX Runtime.
# Usage: scripts/demo.sh [MODEL [TARGET]]   (default: tiny_cnn tiny)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld > /dev/null
fi
ninja -C build loom
model=${1:-tiny_cnn}
target=${2:-tiny}
/usr/bin/python3 scripts/export_zoo.py build/zoo --models "$model"
work=build/demo-$model
mkdir -p "$work"
echo
echo "== loom target show $target"
build/bin/loom target show "$target" | head -12
echo
echo "== loom compile build/zoo/$model.onnx --target=$target -o $work/$model.loom"
build/bin/loom compile "build/zoo/$model.onnx" --target="$target" -o "$work/$model.loom"
echo
echo "== loom run (the simulator) on deterministic random inputs"
inputs=$(/usr/bin/python3 test/e2e/make_inputs.py "build/zoo/$model.onnx" "$work/inputs")
# shellcheck disable=SC2086
build/bin/loom run "$work/$model.loom" $inputs --output-dir "$work/out" \
  --trace="$work/trace.json" --stats="$work/stats.json"
echo "outputs in $work/out, Perfetto trace in $work/trace.json"
echo
echo "== loom check: compiled program against the golden reference"
build/bin/loom check "build/zoo/$model.onnx" --target="$target"
echo
echo "== golden reference against ONNX Runtime"
bash test/e2e/zoo_vs_ort.sh build/bin/loom build/zoo "$model" "$work/ort"
