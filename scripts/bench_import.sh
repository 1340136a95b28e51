#!/usr/bin/env bash
# Measure Loom's ONNX import cost on one model, next to ONNX Runtime's.
#
# usage: bench_import.sh LOOM_BIN MODEL.onnx
#
# Runs, in this order:
#   LOOM_BIN compile MODEL.onnx --emit=graph -o /dev/null
#   node scripts/ort/run.mjs MODEL.onnx --create-only
# and prints a small table: model file size, Loom's import wall time and peak
# RSS, peak RSS / file size, ONNX Runtime's session creation time (as
# measured inside node) and its process peak RSS, and the ratios between
# Loom and ONNX Runtime. Informational only: no pass/fail thresholds; exits
# non-zero only when a command fails.
#
# Peak RSS comes from GNU time (/usr/bin/time -f "%e %M"); where that is not
# installed, from Python's resource.getrusage(RUSAGE_CHILDREN).
# Environment: PYTHON (default /usr/bin/python3), NODE (default node).
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $(basename "$0") LOOM_BIN MODEL.onnx" >&2
  exit 2
fi
loom=$1 model=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON=${PYTHON:-/usr/bin/python3}
NODE=${NODE:-node}

die() { echo "bench_import: error: $*" >&2; exit 1; }
[ -f "$model" ] || die "model not found: $model"
command -v "$loom" >/dev/null || die "loom binary not found: $loom"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# measure OUTFILE CMD...: runs CMD (stdout -> OUTFILE.out, stderr -> OUTFILE.err)
# and writes "WALL_SECONDS PEAK_RSS_KB" to OUTFILE. Returns CMD's exit status.
measure() {
  local out=$1; shift
  if [ -x /usr/bin/time ] && /usr/bin/time -f "%e %M" -o /dev/null true 2>/dev/null; then
    # GNU time's %e has 10 ms resolution; take the wall time from date instead.
    local start end rc=0
    start=$(date +%s.%N)
    /usr/bin/time -f "%e %M" -o "$out.time" "$@" >"$out.out" 2>"$out.err" || rc=$?
    end=$(date +%s.%N)
    tail -n 1 "$out.time" | awk -v a="$start" -v b="$end" '{ printf "%.3f %s\n", b - a, $NF }' >"$out"
    return $rc
  else
    "$PYTHON" - "$out" "$@" >"$out.out" 2>"$out.err" <<'EOF'
import resource, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.monotonic()
rc = subprocess.call(cmd)
wall = time.monotonic() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KB on Linux
with open(out, "w") as f:
    f.write(f"{wall:.3f} {rss}\n")
sys.exit(rc)
EOF
  fi
}

file_bytes=$(stat -c %s "$model")

# Loom import
if ! measure "$tmp/loom" "$loom" compile "$model" --emit=graph -o /dev/null; then
  cat "$tmp/loom.err" >&2
  die "'$loom compile $model --emit=graph -o /dev/null' failed"
fi
read -r loom_wall loom_rss_kb <"$tmp/loom"

# ONNX Runtime session creation (same model, same run)
if ! measure "$tmp/ort" "$NODE" "$here/ort/run.mjs" "$model" --create-only; then
  cat "$tmp/ort.err" >&2
  die "ONNX Runtime session creation failed (scripts/ort/run.mjs)"
fi
read -r ort_wall ort_rss_kb <"$tmp/ort"
ort_create_ms=$(sed -n 's/.*"session_create_ms":\([0-9.eE+-]*\).*/\1/p' "$tmp/ort.out")
[ -n "$ort_create_ms" ] || die "could not parse run.mjs output: $(cat "$tmp/ort.out")"

awk -v model="$model" -v fb="$file_bytes" \
    -v lw="$loom_wall" -v lr="$loom_rss_kb" \
    -v oc="$ort_create_ms" -v ow="$ort_wall" -v orss="$ort_rss_kb" '
function mb(bytes) { return bytes / 1048576 }
BEGIN {
  printf "%-36s %s\n", "model", model
  printf "%-36s %12.2f MiB\n", "file size", mb(fb)
  printf "%-36s %12.3f s\n", "loom import wall time", lw
  printf "%-36s %12.2f MiB\n", "loom import peak RSS", mb(lr * 1024)
  printf "%-36s %12.2f x\n", "loom peak RSS / file size", (lr * 1024) / fb
  printf "%-36s %12.3f s\n", "ORT session create (in-process)", oc / 1000
  printf "%-36s %12.3f s\n", "ORT process wall time (node start+)", ow
  printf "%-36s %12.2f MiB\n", "ORT process peak RSS", mb(orss * 1024)
  printf "%-36s %12.2f x\n", "ORT peak RSS / file size", (orss * 1024) / fb
  if (oc > 0)   printf "%-36s %12.2f x\n", "loom import / ORT session create", lw / (oc / 1000)
  if (orss > 0) printf "%-36s %12.2f x\n", "loom peak RSS / ORT peak RSS", lr / orss
}'
