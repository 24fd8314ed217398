# Python frames in the eBPF CPU profiler's samples on the GPU machine (docs/cpu-profiling.md,
# "Python frames"). Sourced by tests/gpu/run.sh (record/note, $gp, $src, $work, $out).
# The PyTorch inference example (python3.12 there) recorded with --cpu --freq 499: the
# on-CPU folded stacks must hold Python frames of pytorch_transformer.py with line numbers
# (its run()/step() and the model's forward methods), the same frames the launch stacks of
# the GPU side show, and the eval loop merged away where they are. Writes the folded CPU
# stacks, the unified SVG and the CPU report to $out/cpupy/. It also says how many samples
# carried Python frames and which losses were counted (stats 101-104). Well under a minute.
cpupy_check() {
  if [[ $(id -u) -ne 0 ]]; then
    note cpupy FAIL "not root: the eBPF CPU profiler needs root"
    return
  fi
  local dir=$work/cpupy/rec
  mkdir -p "$out/cpupy" "$work/cpupy"
  timeout 300 "$gp" record -o "$dir" --force --cpu --freq 499 -- \
    python3 "$src/examples/pytorch_transformer.py" --steps 20 \
    > "$work/cpupy/record.out" 2> "$work/cpupy/record.err"
  local rc=$?
  echo "== cpupy: exit $rc; $(grep -h '^gpuperf: CPU:' "$work/cpupy/record.err")" | tee -a "$results"
  grep -h 'gpuperf: note:' "$work/cpupy/record.err" | tee -a "$results"
  local problems=()
  [[ $rc -eq 0 ]] || problems+=("exit $rc: $(tail -2 "$work/cpupy/record.err" | tr '\n' ' ')")
  "$gp" flamegraph --folded --weight cpu -o "$out/cpupy/cpu.folded" "$dir" 2>/dev/null ||
    problems+=("flamegraph --weight cpu failed")
  "$gp" flamegraph --folded --weight gpu -o "$out/cpupy/gpu.folded" "$dir" 2>/dev/null
  "$gp" flamegraph --weight all -o "$out/cpupy/all.svg" "$dir" 2>/dev/null ||
    problems+=("flamegraph --weight all failed")
  "$gp" report --sections cpu "$dir" > "$out/cpupy/report.txt" 2>&1
  local folded=$out/cpupy/cpu.folded
  local total py fwd eval_beside
  total=$(awk '{ s += $NF } END { print s + 0 }' "$folded")
  py=$(grep 'pytorch_transformer.py:[0-9]' "$folded" | awk '{ s += $NF } END { print s + 0 }')
  # Python frames of the example's own functions, with lines, on the CPU side ...
  fwd=$(grep -oE '(run|step|inference_step|[A-Za-z]*\.forward) \(pytorch_transformer.py:[0-9]+\)' \
    "$folded" | sort -u | head -8 | tr '\n' ' ')
  [[ $py -gt 0 ]] || problems+=("no on-CPU stack holds a pytorch_transformer.py frame")
  grep -qE 'forward \(pytorch_transformer.py:[0-9]+\)' "$folded" ||
    problems+=("no forward() frame with its line on the CPU side")
  grep -qE 'step \(pytorch_transformer.py:[0-9]+\)' "$folded" ||
    problems+=("no step() frame with its line on the CPU side")
  # ... the eval loop merged away beside them ...
  eval_beside=$(grep '_PyEval_EvalFrameDefault' "$folded" | grep -c 'pytorch_transformer.py:')
  [[ $eval_beside -eq 0 ]] || problems+=("$eval_beside stacks keep _PyEval_EvalFrameDefault beside Python frames")
  # ... and the same function frames as the GPU side's launch stacks.
  local shared
  shared=$(comm -12 <(grep -oE '[A-Za-z_.]+ \(pytorch_transformer.py:[0-9]+\)' "$folded" | sort -u) \
    <(grep -oE '[A-Za-z_.]+ \(pytorch_transformer.py:[0-9]+\)' "$out/cpupy/gpu.folded" | sort -u) | wc -l)
  [[ $shared -gt 0 ]] || problems+=("no Python frame (function and line) common to CPU and GPU stacks")
  local stats
  stats=$(grep -oE '[0-9,]+ [^[]*\[cpu_python_[a-z_]+\]' "$out/cpupy/report.txt" | tr '\n' ';')
  echo "   Python frames in $((py * 100 / (total > 0 ? total : 1)))% of on-CPU time; frames: $fwd;" \
    "$shared function:line frames shared with launch stacks; $stats" | tee -a "$results"
  note cpupy "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-Python frames in $((py * 100 / (total > 0 ? total : 1)))% of on-CPU time; folded and SVG in cpupy/}"
}
