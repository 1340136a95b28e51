#!/usr/bin/env bash
# Builds Loom's libFuzzer harnesses (fuzz/) and runs each for a while.
# Usage: scripts/fuzz.sh [SECONDS] [HARNESS...]
#   SECONDS   per harness (default 600)
#   HARNESS   onnx, target, program, npy (default: all four, one at a time)
# Environment:
#   LOOM_FUZZ_WORK   working folder (default /tmp/loom-fuzz): <harness>/corpus
#                    is the working copy of the corpus (started afresh from
#                    fuzz/corpus/<harness> and fuzz/regressions/<harness>
#                    unless LOOM_FUZZ_KEEP_CORPUS=1), <harness>/crashes/ gets
#                    crashing inputs, <harness>/fuzz.log the fuzzer's output
#   LOOM_FUZZ_JOBS   build parallelism (default 2)
#   LOOM_FUZZ_NO_BUILD=1  run the fuzzers already in build-fuzz/bin as they are
# The fuzz build lives in build-fuzz/ (RelWithDebInfo, -DLOOM_BUILD_FUZZERS=ON:
# everything instrumented with libFuzzer coverage, ASan and UBSan); each
# fuzzer runs with -timeout=10 -rss_limit_mb=2048 and fuzz/<harness>.dict as
# its dictionary where there is one. Prints,
# per harness: executions, exec/s, coverage (libFuzzer's cov: and ft:) and
# whether it crashed. Exits 1 if any harness crashed, leaked or timed out.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

seconds=${1:-600}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(onnx target program npy)
work=${LOOM_FUZZ_WORK:-/tmp/loom-fuzz}
jobs=${LOOM_FUZZ_JOBS:-2}

for h in "${harnesses[@]}"; do
  case $h in
    onnx|target|program|npy) ;;
    *) echo "fuzz.sh: unknown harness '$h' (onnx, target, program, npy)" >&2
       exit 1 ;;
  esac
done

export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
if ! grep -q '^LOOM_BUILD_FUZZERS:BOOL=ON' build-fuzz/CMakeCache.txt 2>/dev/null; then
  echo "== configuring build-fuzz"
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DLOOM_BUILD_FUZZERS=ON \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld > build-fuzz.configure.log 2>&1 ||
    { cat build-fuzz.configure.log; exit 1; }
fi
if [ "${LOOM_FUZZ_NO_BUILD:-0}" != 1 ]; then
  echo "== building the fuzzers"
  ninja -C build-fuzz -j "$jobs" "${harnesses[@]/#/loom-fuzz-}"
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=0
summary=()
for h in "${harnesses[@]}"; do
  dir=$work/$h
  if [ "${LOOM_FUZZ_KEEP_CORPUS:-0}" != 1 ]; then
    rm -rf "$dir/corpus"
  fi
  mkdir -p "$dir/corpus" "$dir/crashes"
  cp fuzz/corpus/$h/* "$dir/corpus/"
  if [ -d fuzz/regressions/$h ]; then
    find fuzz/regressions/$h -type f -exec cp {} "$dir/corpus/" \;
  fi
  echo "== fuzzing $h for $seconds s (log: $dir/fuzz.log, crashes: $dir/crashes/)"
  dict=()
  [ -f fuzz/$h.dict ] && dict=(-dict=fuzz/$h.dict)
  rc=0
  build-fuzz/bin/loom-fuzz-$h "$dir/corpus" -max_total_time="$seconds" \
    -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$dir/crashes/" > "$dir/fuzz.log" 2>&1 || rc=$?
  # The last status line ("#N DONE cov: C ft: F corp: ...", or the last
  # progress line if it stopped early) and the final statistics.
  status=$(grep -E '^#[0-9]+' "$dir/fuzz.log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<< "$status")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<< "$status")
  corp=$(sed -n 's/.* corp: \([0-9]*\/[0-9a-zA-Z]*\).*/\1/p' <<< "$status")
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/fuzz.log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/fuzz.log")
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$dir/fuzz.log")
  artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$dir/fuzz.log" | tail -1)
  if [ "$rc" = 0 ]; then
    crashed=no
  else
    crashed="YES (exit $rc: $(grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|libFuzzer: ' "$dir/fuzz.log" || true); input: ${artifact:-none written})"
    failed=1
  fi
  line="$h: ${runs:-?} executions, ${rate:-?} exec/s, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}, peak RSS ${rss:-?} MB, crashed: $crashed"
  echo "$line"
  summary+=("$line")
done
echo "== summary ($seconds s each)"
printf '%s\n' "${summary[@]}"
if [ "$failed" != 0 ]; then
  echo "fuzz.sh: a harness failed; its input is in $work/<harness>/crashes/." >&2
  echo "Fix the bug, then add the input to fuzz/regressions/<harness>/." >&2
  exit 1
fi
