#!/usr/bin/env bash
# Fault injection over the model zoo (the e2e_verify_mutations test in
# test/e2e/CMakeLists.txt): compiles zoo models in every mapping they fit,
# then runs loom-verify-mutations over all the programs, which checks that
# each unmutated program passes the schedule verifier and that every
# mutation of it is rejected.
#
#   run_zoo.sh LOOM LOOM_VERIFY_MUTATIONS ZOO_DIR WORK_DIR [PER_KIND] [MIN_TOTAL]
#
# PER_KIND (default 20) mutations per kind per program; the run fails unless
# at least MIN_TOTAL (default 100) mutations were applied.
set -u

fail() {
  echo "e2e_verify_mutations: FAIL: $*" >&2
  exit 1
}

[ $# -ge 4 ] || fail "usage: run_zoo.sh LOOM LOOM_VERIFY_MUTATIONS ZOO_DIR WORK_DIR [PER_KIND] [MIN_TOTAL]"
loom=$1
mutate=$2
zoo=$3
work=$4
per_kind=${5:-20}
min_total=${6:-100}
mkdir -p "$work" || fail "cannot create $work"

# model:target:mapping:policy[:flags]. policy "must" means the compile has to
# succeed; "fit" allows it to fail only with the mapper's "does not fit"
# diagnostic (too many kernels for the tiles, or weights too large), which
# is by design for the large models on a small grid.
specs=(
  tiny_cnn:tiny:sequential:must
  tiny_cnn:tiny:pipelined:must
  tiny_cnn:tiny:hybrid:must
  tiny_cnn:wormhole:pipelined:fit
  tiny_cnn:wormhole:hybrid:fit
  resnet50:tsp-v1:sequential:must
  resnet50:tsp-v1:pipelined:fit
  resnet50:tsp-v1:hybrid:must
  gpt2:tsp-v1:sequential:must
  gpt2:tsp-v1:pipelined:fit
  gpt2:tsp-v1:hybrid:must
  mobilenetv2:tsp-v1:sequential:fit
  mobilenetv2:tsp-v1:hybrid:fit
  bert:tsp-v1:sequential:fit
  bert:tsp-v1:hybrid:fit
  # Across chips: chip-link reservations (transfers between pipeline
  # stages, collectives lowered to chip-to-chip transfers) are mutated too.
  "gpt2_decode:tsp-v1:sequential:must:--tp=2 --pp=2"
  "gpt2_decode:tsp-v1:pipelined:must:--pp=4"
  "gpt2_decode:tsp-v1:sequential:must:--tp=4"
)

programs=()
for spec in "${specs[@]}"; do
  IFS=: read -r model target mapping policy flags <<<"$spec"
  read -r -a extra <<<"${flags:-}"
  name="${model}_${target}_${mapping}${flags:+_${flags// /_}}"
  name=${name//=/}
  name=${name//-/}
  out="$work/$name.loom"
  log="$work/$name.log"
  rm -f "$out"
  if "$loom" compile "$zoo/$model.onnx" --target="$target" --mapping="$mapping" \
    ${extra[@]+"${extra[@]}"} -o "$out" >"$log" 2>&1; then
    programs+=("$out")
    echo "compiled $model on $target, $mapping mapping${flags:+ ($flags)}"
  elif [ "$policy" = fit ] &&
    grep -qE "no (pipelined|hybrid) mapping on .*(do not fit|does not fit)" "$log"; then
    echo "skipped $model on $target, $mapping mapping: $(grep -oE 'no (pipelined|hybrid) mapping.*' "$log" | head -1)"
  else
    cat "$log" >&2
    fail "'loom compile $model.onnx --target=$target --mapping=$mapping' failed"
  fi
done

result=$("$mutate" --per-kind "$per_kind" --seed 1 "${programs[@]}")
rc=$?
printf '%s\n' "$result"
[ "$rc" = 0 ] || fail "loom-verify-mutations exited $rc"
total=$(printf '%s\n' "$result" | sed -nE 's/^([0-9]+) mutations over [0-9]+ programs: all rejected.*/\1/p')
[ -n "$total" ] || fail "no summary line from loom-verify-mutations"
[ "$total" -ge "$min_total" ] || fail "only $total mutations, need at least $min_total"
# The chip-link mutations were applied (to the multi-chip programs).
for kind in double-book-chip-link chip-link-early-start chip-link-early chip-link-kind; do
  applied=$(printf '%s\n' "$result" | awk -v k="$kind" '$1 == k { print $3 }')
  [ "${applied:-0}" -gt 0 ] ||
    fail "no '$kind' mutation was applied (the multi-chip programs have chip links)"
done
# The faults of physics and data flow were applied (every program has
# kernels and transfers; the K split and halo ones where a program offers
# them).
for kind in work-too-fast bytes-too-fast fewer-bytes wrong-route missing-operand; do
  applied=$(printf '%s\n' "$result" | awk -v k="$kind" '$1 == k { print $3 }')
  [ "${applied:-0}" -gt 0 ] || fail "no '$kind' mutation was applied"
done
echo "e2e_verify_mutations: PASS ($total mutations over ${#programs[@]} programs)"
