# Python process trees (issue 13): multiprocessing spawn, fork-then-CUDA, torchrun, and workers
# that leave through os._exit or an uncaught exception. Each CUDA process gets its own trace,
# one report reads them all, and every launched kernel is recorded, except that a process
# leaving through os._exit may lose up to one flush period, which record must report.
pytree_check() {
  local problems=() mode
  for mode in spawn fork exit torchrun; do
    local dir=$work/rec/pytree_$mode
    local cmd=(python3 "$src/tests/gpu/process_tree.py" "$mode")
    if [[ $mode == torchrun ]]; then
      cmd=(torchrun --standalone --nproc-per-node 1 "$src/tests/gpu/process_tree.py" fork)
    fi
    timeout 300 "$gp" record -o "$dir" --force -- "${cmd[@]}" > "$work/pytree_$mode.out" 2> "$work/pytree_$mode.err"
    local rc=$?
    local procs; procs=$(grep -c "^process_tree:" "$work/pytree_$mode.out")
    local launched; launched=$(sed -n 's/^process_tree: .* kernels=\([0-9]*\).*/\1/p' "$work/pytree_$mode.out" |
      awk '{s += $1} END {print s + 0}')
    local traces; traces=$(ls "$dir"/*.gpt 2>/dev/null | wc -l)
    "$gp" report "$dir" > "$work/pytree_$mode.report" 2>&1 || problems+=("$mode: report failed")
    # Elementwise kernels by name in the report's kernel table (torch's own setup adds others).
    local recorded; recorded=$("$gp" report "$dir" --format json 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
print(sum(k.get("count", 0) for k in r.get("kernels", []) if "elementwise" in k.get("name", "")))' 2>/dev/null)
    echo "== pytree $mode: exit $rc, $procs CUDA processes said hello, $traces traces, $recorded of $launched elementwise kernels" | tee -a "$results"
    grep -E "^gpuperf: |^  (kernels|lost)" "$work/pytree_$mode.err" | sed 's/^/   /' >> "$results"
    # The forked child and the os_exit worker leave through os._exit: no exit handler runs, so
    # up to one flush period (all of their 40 kernels) may be lost, and it must be said.
    local lossy=0
    [[ $mode != spawn ]] && lossy=1
    [[ $rc -eq 0 ]] || problems+=("$mode: exit $rc")  # a raising child's 1 is its own
    [[ $traces -ge $procs && $procs -gt 0 ]] || problems+=("$mode: $traces traces for $procs CUDA processes")
    [[ ${recorded:-0} -ge $((launched - 40 * lossy)) && $launched -gt 0 ]] ||
      problems+=("$mode: ${recorded:-?} of $launched kernels")
    if [[ ${recorded:-0} -lt $launched ]] &&
      ! grep -q "LOST .*ended before its final flush" "$work/pytree_$mode.err"; then
      problems+=("$mode: kernels missing without a LOST line")
    fi
  done
  note pytree "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-spawn, fork-then-CUDA, torchrun, os._exit/raise: one trace per CUDA process, every kernel or an honest LOST line}"
}
