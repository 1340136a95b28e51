#!/usr/bin/env bash
# Sets up a fresh Debian machine, builds Loom, and runs every test:
#   0. the runtime configured alone (runtime/CMakeLists.txt: no LLVM or MLIR
#      on its include path), built with its unit tests and run;
#   1. the release build: lit, GoogleTest, the model zoo against ONNX Runtime,
#      and ONNX's conformance data (all under ctest);
#   2. a second build with AddressSanitizer + UndefinedBehaviorSanitizer that
#      runs the whole suite again (lit, GoogleTest, conformance, hostile
#      inputs, fuzz corpus replays, fault injection, and the zoo end to end
#      on the tiny preset), all but the tests of the larger zoo models
#      (label "large"; the Python module is not built with sanitizers).
# Usage: scripts/test.sh [--no-sanitize]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh

jobs=$(nproc)
# Let clones of the repository share ccache entries (paths are made relative).
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
# The runtime alone and the release build turn warnings into errors
# (LOOM_WERROR); the sanitizer build compiles the same sources, so it does
# not check them again (and keeps its compiler-cache entries).
configure() { # DIR [extra cmake args]
  local dir=$1; shift
  cmake -S . -B "$dir" -G Ninja -DLOOM_WERROR=ON \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld "$@" > "$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log"; exit 1; }
}

echo "== the runtime alone (no LLVM or MLIR on its include path)"
cmake -S runtime -B build-runtime -G Ninja -DLOOM_WERROR=ON \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-22 \
  -DCMAKE_CXX_COMPILER=clang++-22 > build-runtime.configure.log 2>&1 ||
  { cat build-runtime.configure.log; exit 1; }
ninja -C build-runtime -j "$jobs"
(cd build-runtime && ctest --output-on-failure -j "$jobs")

echo "== release build"
configure build -DCMAKE_BUILD_TYPE=Release
ninja -C build -j "$jobs"
echo "== release tests"
(cd build && ctest --output-on-failure -j "$jobs")

if [ "${1:-}" != "--no-sanitize" ]; then
  echo "== sanitizer build (ASan + UBSan)"
  configure build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLOOM_SANITIZE=ON \
    -DLOOM_WERROR=OFF
  ninja -C build-asan -j "$jobs"
  echo "== sanitizer tests: the whole suite but the larger zoo models (ctest -LE large)"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # The zoo comes from the release build's export (same script, same bytes).
  mkdir -p build-asan/zoo
  for f in build/zoo/*; do ln -sf "$root/$f" build-asan/zoo/; done
  (cd build-asan && ctest --output-on-failure -j "$jobs" -LE large --timeout 1500)
fi
echo "scripts/test.sh: all tests passed"
