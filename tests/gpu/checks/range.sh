# The capture range on real CUDA (sourced by tests/gpu/run.sh): PyTorch training recorded
# with --duration 1 for longer than that; 0.5 s after the range gpuperf detaches from CUPTI
# (src/inject/cupti/detach.h) while the program goes on launching. The program must finish
# normally, the trace must hold the range's kernels, all joined to their stacks, nothing
# lost, and the detach counted (cupti_detached_after_range).
range_check() {
  local rec=$work/rec/range problems=()
  mkdir -p "$rec"
  if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    note range FAIL "no torch with CUDA"
    return
  fi
  local start=$SECONDS
  timeout 300 "$gp" record -o "$rec" --force --duration 1 -- python3 "$src/examples/pytorch_transformer.py" \
    --train --steps 400 --batch 2 --seq 64 --dim 128 --layers 2 --no-check > "$work/range.out" 2> "$work/range.err" ||
    problems+=("record exit $?")
  local seconds=$((SECONDS - start))
  "$gp" flamegraph --folded -o "$work/range.folded" "$rec" 2> "$work/range.flame.err"
  local joined; joined=$(grep -o '[0-9,]*/[0-9,]* kernels joined' "$work/range.flame.err" | tr -d ,)
  [[ -n $joined && ${joined%%/*} == $(cut -d/ -f2 <<<"${joined%% *}") && ${joined%%/*} -gt 0 ]] ||
    problems+=("not every kernel joined (${joined:-none})")
  grep -q "lost      nothing" "$work/range.err" || problems+=("lost: $(grep -A1 -i lost "$work/range.err" | tr '\n' ' ')")
  local detached; detached=$("$gp" dump "$rec" 2>/dev/null | grep '# cupti_detached_after_range$' | tail -1 |
    sed 's/.*value=\([0-9]*\).*/\1/')
  [[ $detached == 1 ]] || problems+=("CUPTI not detached after the range ('$detached')")
  echo "   range: ${seconds} s run, ${joined:-no} kernels joined, detached=${detached:-no}, $(grep -o 'step_ms=[0-9.]*' "$work/range.out")" >> "$results"
  note range "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-${joined} kernels joined in a 1 s range of a ${seconds} s run, CUPTI detached after it}"
}
