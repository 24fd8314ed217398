# Python frames in the eBPF CPU profiler's samples and off-CPU stacks on the GPU machine
# (docs/cpu-profiling.md, "Python frames"). Sourced by tests/gpu/run.sh (record/note, $gp,
# $src, $work, $out). The PyTorch inference example (python3.12 there) recorded with --cpu
# --off-cpu --freq 499: the on-CPU folded stacks must hold Python frames of
# pytorch_transformer.py with line numbers (its run()/step() and the model's forward
# methods), the same frames the launch stacks of the GPU side show, and the eval loop merged
# away where they are; off-CPU stacks must carry Python frames too. Native stacks through
# libtorch (no frame pointers) are unwound from stack copies with .eh_frame: the share of
# on-CPU time whose stack runs unbroken from a pytorch_transformer.py frame into an at::
# or c10:: frame is measured with that and, in a second run, with frame pointers only
# (GPUPERF_CPU_UNWIND=fp). Writes the folded stacks, the unified SVGs and the CPU report to
# $out/cpupy/. Also says which losses were counted (stats 101-110). About a minute.
cpupy_check() {
  if [[ $(id -u) -ne 0 ]]; then
    note cpupy FAIL "not root: the eBPF CPU profiler needs root"
    return
  fi
  local dir=$work/cpupy/rec
  mkdir -p "$out/cpupy" "$work/cpupy"
  timeout 300 "$gp" record -o "$dir" --force --cpu --off-cpu --freq 499 -- \
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
  # Off-CPU stacks with Python frames.
  "$gp" flamegraph --folded --weight offcpu -o "$out/cpupy/offcpu.folded" "$dir" 2>/dev/null ||
    problems+=("flamegraph --weight offcpu failed")
  local off_total off_py
  off_total=$(awk '{ s += $NF } END { print s + 0 }' "$out/cpupy/offcpu.folded")
  off_py=$(grep 'pytorch_transformer.py:[0-9]' "$out/cpupy/offcpu.folded" | awk '{ s += $NF } END { print s + 0 }')
  [[ $off_py -gt 0 ]] || problems+=("no off-CPU stack holds a pytorch_transformer.py frame")
  grep -q '_PyEval_EvalFrameDefault.*pytorch_transformer\.py:\|pytorch_transformer\.py:.*_PyEval_EvalFrameDefault' \
    "$out/cpupy/offcpu.folded" &&
    problems+=("off-CPU stacks keep _PyEval_EvalFrameDefault beside Python frames")
  # Native frames under the Python ones: on-CPU time whose stack goes from the example's
  # frames into PyTorch's C++ (at::, c10::, torch::), with .eh_frame and with frame pointers.
  local deep deep_fp
  deep=$(grep -E 'pytorch_transformer.py:[0-9]+\);.*(at::|c10::|torch::)' "$folded" |
    awk '{ s += $NF } END { print s + 0 }')
  timeout 300 env GPUPERF_CPU_UNWIND=fp "$gp" record -o "$work/cpupy/fp" --force --cpu --freq 499 -- \
    python3 "$src/examples/pytorch_transformer.py" --steps 20 > /dev/null 2> "$work/cpupy/fp.err"
  "$gp" flamegraph --folded --weight cpu -o "$out/cpupy/cpu_fp.folded" "$work/cpupy/fp" 2>/dev/null
  local total_fp
  total_fp=$(awk '{ s += $NF } END { print s + 0 }' "$out/cpupy/cpu_fp.folded")
  deep_fp=$(grep -E 'pytorch_transformer.py:[0-9]+\);.*(at::|c10::|torch::)' "$out/cpupy/cpu_fp.folded" |
    awk '{ s += $NF } END { print s + 0 }')
  [[ $deep -gt 0 ]] || problems+=("no on-CPU stack runs from pytorch_transformer.py into at::/c10::/torch::")
  local main_pid
  main_pid=$(ls "$dir" | grep -v '^cpu\.' | sed -n 's/.*\.\([0-9]*\)\.gpt$/\1/p' | head -1)
  [[ -n $main_pid ]] && "$gp" flamegraph --weight all --tid "$main_pid" --title \
    "PyTorch inference: the main thread's GPU, on-CPU and off-CPU time" \
    -o "$out/cpupy/main.svg" "$dir" 2>/dev/null
  echo "   off-CPU: $((off_py / 1000000)) ms under the example's Python frames (all threads:" \
    "$((off_total / 1000000)) ms, mostly idle pools); on-CPU from the example's frames into at::/c10::/torch::" \
    "$((deep * 1000 / (total > 0 ? total : 1)))‰ with .eh_frame," \
    "$((deep_fp * 1000 / (total_fp > 0 ? total_fp : 1)))‰ with frame pointers only" | tee -a "$results"
  local stats
  stats=$("$gp" dump "$dir"/cpu.*.gpt 2>/dev/null | grep -E '^stat .*# (cpu_python|off_cpu_python|cpu_stack|cpu_unwind)' |
    sed -E 's/.*value=([0-9]+) # (.*)/\2=\1/' | tr '\n' ' ')
  echo "   Python frames in $((py * 100 / (total > 0 ? total : 1)))% of on-CPU time; frames: $fwd;" \
    "$shared function:line frames shared with launch stacks; $stats" | tee -a "$results"
  note cpupy "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-Python frames in $((py * 100 / (total > 0 ? total : 1)))% of on-CPU time; folded and SVG in cpupy/}"
}
