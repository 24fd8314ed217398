# Nsight Compute and gpuperf in one command, both ways round (docs/recording.md, "Other
# profilers"): gpuperf steps aside with one line, and ncu profiles the kernels as it would alone.
nsight_check() {
  local ncu
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
  if [[ -z $ncu ]]; then
    note nsight SKIP "no ncu on this machine"
    return
  fi
  local problems=() way
  for way in outside inside; do
    local log=$work/nsight_$way.log
    if [[ $way == outside ]]; then  # gpuperf record -- ncu ./app
      timeout 300 "$gp" record -o "$work/nsight_$way" --force -- "$ncu" -c 2 "$ex/vector_add" > "$log" 2>&1
    else  # ncu gpuperf record -- ./app
      timeout 300 "$ncu" --target-processes all -c 2 "$gp" record -o "$work/nsight_$way" --force -- \
        "$ex/vector_add" > "$log" 2>&1
    fi
    local rc=$?
    sed "s/^/   $way: /" "$log" | grep -E "gpuperf|==PROF==|==ERROR==|==WARNING==" | head -8 >> "$results"
    [[ $rc -eq 0 ]] || problems+=("$way: exit $rc")
    grep -q "steps aside" "$log" || problems+=("$way: no step-aside line")
    grep -q "==PROF== Profiling" "$log" || problems+=("$way: ncu profiled nothing")
    grep -q "==ERROR==" "$log" && problems+=("$way: ncu reported an error")
  done
  note nsight "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-ncu profiled, gpuperf stepped aside, both ways round}"
}
