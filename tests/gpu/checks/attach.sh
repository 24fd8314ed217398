# GPU check `attach` (sourced by tests/gpu/run.sh; docs/attach.md): gpuperf attach on real
# CUDA, to programs started without gpuperf:
#   - a PyTorch inference loop (tests/gpu/attach_loop.py: the examples' TinyTransformer, one
#     synchronized forward pass a step) and a CUDA C++ program built with nvcc's static cudart
#     (tests/gpu/attach_steps.cu: 25 small kernels and a stream synchronization a step), both
#     timing every step;
#   - both attached at once (`attach PY CC --duration 5s`), twice: each window's trace joins
#     every kernel to its launch stack, with the loop's Python frames (attach_loop.py's serve,
#     the model's forward functions) for PyTorch and run_step for C++; nothing lost; the second
#     attach reuses the library the first loaded;
#   - the step time in each of the two rounds, before (4 s before gpuperf starts), during (the
#     window, from its trace) and after (4 s from when gpuperf ended): PASS needs the median
#     step after within 5% of the one before in every round, for both programs
#     (tests/gpu/attach_step_times.py);
#   - both programs end normally afterwards.
# About 90 s of GPU time. Writes $out/attach/: steps_*.txt, rounds.txt, times_*.json,
# the windows' folded stacks and attach logs, result.txt.
attach_check() {
  local dir=$out/attach problems=() said=()
  mkdir -p "$dir"
  echo "== attach: a PyTorch loop and a CUDA C++ program started plainly, attached for 5 s twice" |
    tee -a "$results"
  if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    note attach FAIL "no torch with CUDA"
    return
  fi
  local nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  if ! "$nvcc" -O2 -g -lineinfo -Xcompiler -fno-omit-frame-pointer -o "$work/attach_steps" \
      "$src/tests/gpu/attach_steps.cu" > "$dir/nvcc.log" 2>&1; then
    note attach FAIL "attach_steps.cu did not build (attach/nvcc.log)"
    return
  fi
  local stop=$work/attach.stop
  rm -f "$stop"
  python3 "$src/tests/gpu/attach_loop.py" "$dir/steps_pytorch.txt" "$stop" 400 \
    > "$dir/pytorch.out" 2> "$dir/pytorch.err" &
  local py_job=$!
  "$work/attach_steps" "$dir/steps_cpp.txt" "$stop" 400 > "$dir/cpp.out" 2> "$dir/cpp.err" &
  local cc_job=$!
  local waited
  for ((waited = 0; waited < 1200; waited++)); do
    grep -q 'ready' "$dir/pytorch.out" && grep -q 'ready' "$dir/cpp.out" && break
    sleep 0.1
  done
  local py cc
  py=$(sed -n 's/^attach-loop: ready pid=\([0-9]*\).*/\1/p' "$dir/pytorch.out")
  cc=$(sed -n 's/^attach-steps: ready pid=\([0-9]*\).*/\1/p' "$dir/cpp.out")
  if [[ -z $py || -z $cc ]]; then
    touch "$stop"; wait "$py_job" "$cc_job"
    note attach FAIL "the programs did not start: $(tail -2 "$dir/pytorch.err" "$dir/cpp.err" | tr '\n' ' ')"
    return
  fi
  now_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }
  : > "$dir/rounds_pytorch.txt"
  : > "$dir/rounds_cpp.txt"
  local round
  for round in 1 2; do
    local b0 b1 a0 a1 trace rec=$work/rec/attach$round
    b0=$(now_ns); sleep 4; b1=$(now_ns)
    "$gp" attach "$py" "$cc" --duration 5s -v -o "$rec" --force > "$dir/attach$round.log" 2>&1
    local rc=$?
    a0=$(now_ns); sleep 4; a1=$(now_ns)
    sed 's/^/   /' "$dir/attach$round.log" | tee -a "$results"
    [[ $rc -eq 0 ]] || problems+=("round $round: attach exit $rc")
    grep -q "lost      nothing" "$dir/attach$round.log" || problems+=("round $round: something lost")
    local name pid
    for name in pytorch cpp; do
      [[ $name == pytorch ]] && pid=$py || pid=$cc
      trace=$(ls "$rec"/*."$pid".gpt 2>/dev/null | head -1)
      if [[ -z $trace ]]; then
        problems+=("round $round: no trace of $name")
        continue
      fi
      # The window as the trace has it: the process record's start and end.
      "$gp" dump "$trace" 2>/dev/null | grep '^process ' | tail -1 |
        sed -n 's/.* start_ns=\([0-9]*\) end_ns=\([0-9]*\).*/\1 \2/p' > "$work/attach_window"
      read -r w0 w1 < "$work/attach_window"
      echo "$b0 $b1 ${w0:-0} ${w1:-0} $a0 $a1" >> "$dir/rounds_$name.txt"
      "$gp" flamegraph --folded -o "$dir/${name}_round$round.folded" "$trace" 2> "$work/attach_flame.err"
      local joined; joined=$(joined_of "$work/attach_flame.err")
      all_joined "$joined" 100 || problems+=("round $round, $name: not every kernel joined (${joined:-none})")
      if [[ $name == pytorch ]]; then
        grep -q 'serve (attach_loop\.py:[0-9]*)' "$dir/${name}_round$round.folded" &&
          grep -q 'forward (pytorch_transformer\.py:[0-9]*)' "$dir/${name}_round$round.folded" ||
          problems+=("round $round: PyTorch stacks without the loop's Python frames")
      else
        grep -q 'run_step' "$dir/${name}_round$round.folded" ||
          problems+=("round $round: C++ stacks without run_step")
      fi
      said+=("r$round $name ${joined:-?}")
    done
  done
  # One library in each, loaded by the first attach and used again by the second.
  local pid mapped
  for pid in "$py" "$cc"; do
    mapped=$(grep -o '/[^ ]*libgpuperf_inject[^ ]*' "/proc/$pid/maps" 2>/dev/null | sort -u | wc -l)
    [[ $mapped -eq 1 ]] || problems+=("process $pid maps $mapped gpuperf libraries, want 1")
  done
  touch "$stop"
  wait "$py_job"; local py_rc=$?
  wait "$cc_job"; local cc_rc=$?
  [[ $py_rc -eq 0 && $cc_rc -eq 0 ]] || problems+=("the programs exited $py_rc and $cc_rc")
  local name verdicts=()
  for name in pytorch cpp; do
    python3 "$src/tests/gpu/attach_step_times.py" "$name" "$dir/steps_$name.txt" "$dir/rounds_$name.txt" \
      --json "$dir/times_$name.json" > "$work/attach_times_$name.txt" 2>&1 || problems+=("$name step times")
    sed 's/^/   /' "$work/attach_times_$name.txt" | tee -a "$results"
    verdicts+=("$(tail -1 "$work/attach_times_$name.txt" | sed 's/^attach-steps //')")
  done
  local detail="${said[*]}; ${verdicts[*]}"
  echo "$detail" > "$dir/result.txt"
  note attach "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" "${problems[*]:-$detail}"
}
