#!/usr/bin/env bash
# Same input, same output: compiles a zoo model twice, on one core and on
# every core (taskset), with each mapping given, and requires byte-identical
# program files; then simulates each program twice (functional, with the
# same inputs) and requires byte-identical statistics, traces and outputs.
#
# usage: determinism.sh LOOM ZOO_DIR MODEL TARGET WORK_DIR [MAPPING...]
set -euo pipefail
[ $# -ge 5 ] || { echo "usage: determinism.sh LOOM ZOO_DIR MODEL TARGET WORK_DIR [MAPPING...]" >&2; exit 2; }
loom=$1 zoo=$2 model=$3 target=$4 work=$5
shift 5
mappings=("$@")
[ ${#mappings[@]} -gt 0 ] || mappings=(auto)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail() { echo "determinism[$model/$target]: FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
/usr/bin/python3 "$here/make_inputs.py" "$zoo/$model.onnx" "$work/inputs" > "$work/input_args"
read -r -a input_args < "$work/input_args"
cores=$(nproc)
for mapping in "${mappings[@]}"; do
  a="$work/$mapping.a.loom" b="$work/$mapping.b.loom"
  taskset -c 0 "$loom" compile "$zoo/$model.onnx" --target="$target" --mapping="$mapping" \
    --objective=throughput -o "$a" > /dev/null || fail "compile ($mapping, one core)"
  taskset -c "0-$((cores - 1))" "$loom" compile "$zoo/$model.onnx" --target="$target" \
    --mapping="$mapping" --objective=throughput -o "$b" > /dev/null || fail "compile ($mapping, $cores cores)"
  cmp -s "$a" "$b" || fail "$mapping: the program files differ between the two compiles"
  for run in 1 2; do
    taskset -c $(( (run - 1) % cores )) "$loom" run "$a" "${input_args[@]}" \
      --output-dir "$work/$mapping.out$run" --stats="$work/$mapping.stats$run.json" \
      --trace="$work/$mapping.trace$run.json" > /dev/null || fail "run $run ($mapping)"
  done
  cmp -s "$work/$mapping.stats1.json" "$work/$mapping.stats2.json" || fail "$mapping: statistics differ between runs"
  cmp -s "$work/$mapping.trace1.json" "$work/$mapping.trace2.json" || fail "$mapping: traces differ between runs"
  for f in "$work/$mapping.out1"/*.npy; do
    cmp -s "$f" "$work/$mapping.out2/$(basename "$f")" || fail "$mapping: output $(basename "$f") differs between runs"
  done
  echo "determinism[$model/$target/$mapping]: program $(stat -c %s "$a") bytes, stats, trace and outputs identical"
done
