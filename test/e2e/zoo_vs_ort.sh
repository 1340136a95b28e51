#!/usr/bin/env bash
# Check Loom's golden reference evaluator against ONNX Runtime on a zoo model.
#
# usage: zoo_vs_ort.sh LOOM_BIN ZOO_DIR MODEL_NAME WORK_DIR
#
#   1. test/e2e/make_inputs.py writes deterministic random inputs (seed 0)
#      for ZOO_DIR/MODEL_NAME.onnx into WORK_DIR/inputs;
#   2. scripts/ort/run.mjs runs ONNX Runtime on them -> WORK_DIR/ort/*.npy
#      (timing JSON in WORK_DIR/ort.json);
#   3. LOOM_BIN eval ZOO_DIR/MODEL_NAME.onnx --input NAME=FILE.npy ...
#         --output-dir WORK_DIR/loom
#      runs Loom's reference evaluator -> WORK_DIR/loom/*.npy;
#   4. test/e2e/compare.py compares them at rtol 1e-4, atol 1e-5.
#
# Exits 0 when every output matches, non-zero (printing why) otherwise.
# ZOO_DIR comes from scripts/export_zoo.py. Environment: PYTHON (default
# /usr/bin/python3, which has numpy/onnx), NODE (default node).
# WORK_DIR must not contain whitespace.
set -euo pipefail

if [ $# -ne 4 ]; then
  echo "usage: $(basename "$0") LOOM_BIN ZOO_DIR MODEL_NAME WORK_DIR" >&2
  exit 2
fi
loom=$1 zoo=$2 name=$3 work=$4
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
PYTHON=${PYTHON:-/usr/bin/python3}
NODE=${NODE:-node}
RTOL=1e-4
ATOL=1e-5

die() { echo "zoo_vs_ort[$name]: FAIL: $*" >&2; exit 1; }

model="$zoo/$name.onnx"
[ -f "$model" ] || die "model not found: $model (export it with scripts/export_zoo.py $zoo --models $name)"
command -v "$loom" >/dev/null || die "loom binary not found or not executable: $loom"
case "$work" in *[[:space:]]*) die "WORK_DIR must not contain whitespace: '$work'" ;; esac

rm -rf "$work/inputs" "$work/ort" "$work/loom"
mkdir -p "$work/inputs" "$work/ort" "$work/loom"

# 1. inputs
input_line=$("$PYTHON" "$here/make_inputs.py" "$model" "$work/inputs" --seed 0) ||
  die "make_inputs.py failed"
read -r -a input_args <<<"$input_line"
[ ${#input_args[@]} -gt 0 ] || die "model has no inputs"
echo "zoo_vs_ort[$name]: inputs: ${input_args[*]}"

# 2. ONNX Runtime
if ! "$NODE" "$root/scripts/ort/run.mjs" "$model" "${input_args[@]}" \
       --output-dir "$work/ort" >"$work/ort.json"; then
  die "ONNX Runtime run failed (scripts/ort/run.mjs)"
fi
echo "zoo_vs_ort[$name]: ort: $(cat "$work/ort.json")"

# 3. Loom reference evaluator
start=$(date +%s.%N)
if ! "$loom" eval "$model" "${input_args[@]}" --output-dir "$work/loom"; then
  die "'$loom eval' failed"
fi
end=$(date +%s.%N)
echo "zoo_vs_ort[$name]: loom eval: $(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.3f s", b-a}')"

# 4. compare
if ! "$PYTHON" "$here/compare.py" "$work/ort" "$work/loom" --rtol "$RTOL" --atol "$ATOL"; then
  die "loom eval output differs from ONNX Runtime (rtol $RTOL, atol $ATOL)"
fi
echo "zoo_vs_ort[$name]: PASS"
