#!/usr/bin/env bash
# Sets up the machine, builds Loom, and runs the main job on the default
# model and target: exports a small CNN with random weights, imports it into
# the graph dialect, evaluates it with the golden reference, and compares the
# result with ONNX Runtime.
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
echo
echo "== loom target show $target"
build/bin/loom target show "$target"
echo
echo "== loom compile build/zoo/$model.onnx --emit=graph (the graph dialect)"
build/bin/loom compile "build/zoo/$model.onnx" --target="$target" --emit=graph \
  -o "build/demo-$model.mlir"
grep -v '^ *"\|dialect_resources\|^ *builtin\|^ *}\|^{-#\|^#-}' "build/demo-$model.mlir" | head -40
echo
echo "== golden reference vs ONNX Runtime"
bash test/e2e/zoo_vs_ort.sh build/bin/loom build/zoo "$model" "build/demo-$model"
