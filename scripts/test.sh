#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds Loom, and runs every test:
#   1. the release build: lit, GoogleTest, the model zoo against ONNX Runtime,
#      and ONNX's conformance data (all under ctest);
#   2. a second build with AddressSanitizer + UndefinedBehaviorSanitizer that
#      runs the unit tests and the conformance suite.
# Usage: scripts/test.sh [--no-sanitize]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh

jobs=$(nproc)
# Let clones of the repository share ccache entries (paths are made relative).
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
configure() { # DIR [extra cmake args]
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld "$@" > "$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; exit 1; }
}

echo "== release build"
configure build -DCMAKE_BUILD_TYPE=Release
ninja -C build -j "$jobs"
echo "== release tests"
(cd build && ctest --output-on-failure -j "$jobs")

if [ "${1:-}" != "--no-sanitize" ]; then
  echo "== sanitizer build (ASan + UBSan)"
  configure build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOOM_SANITIZE=ON
  ninja -C build-asan -j "$jobs" loom loom-conformance loom-runtime-tests \
    loom-evaluator-tests loom-target-tests loom-sched-tests loom-simulator-tests
  echo "== sanitizer tests"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  for t in loom-runtime-tests loom-evaluator-tests loom-target-tests \
           loom-sched-tests loom-simulator-tests; do
    build-asan/bin/$t --gtest_brief=1
  done
  d=/usr/share/libonnx-testdata/data
  build-asan/bin/loom-conformance $d/node $d/pytorch-converted \
    $d/pytorch-operator $d/simple -j "$jobs" --timeout 600 \
    --known-deviations test/conformance/known-deviations.txt --max-fail 0 \
    --report build-asan/conformance-report.txt | tail -7
  # One model end to end under the sanitizers: compile, simulate, compare.
  /usr/bin/python3 scripts/export_zoo.py build-asan/zoo --models tiny_cnn
  build-asan/bin/loom check build-asan/zoo/tiny_cnn.onnx --target=tiny
fi
echo "scripts/test.sh: all tests passed"
