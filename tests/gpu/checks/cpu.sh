# CPU time beside GPU time on the GPU machine (`record --cpu --off-cpu`, docs/cpu-profiling.md).
# Sourced by tests/gpu/run.sh, which defines record/note/want, $gp, $ex, $src, $work, $out.
#  1. mock_transformer and the PyTorch inference example recorded with --cpu --off-cpu: the
#     CPU profiler started (as root), the unified SVGs (--weight all) and folded stacks go
#     to $out/cpu/, and the CPU's waits for the GPU appear ([wait: GPU sync] blocked or
#     [spin: GPU sync] spinning) next to GPU kernels under the same frames.
#  2. The profiler's cost on PyTorch inference: step_ms under `record` with and without
#     --cpu --off-cpu, alternating, 3 rounds each, median ratio; and, free of the machine's
#     ±20% noise that 3 rounds cannot average away, the profiler's own CPU time (its BPF
#     programs' run time from the kernel's statistics plus its draining thread, as
#     GPUPERF_CPU_COST=1 prints it) as a share of the wall time: of the whole run, and of
#     the inference steps alone (a 1,000-step run less a 50-step one: the import's one-off
#     costs cancel). The budget is 1%; the verdict is on the steady state's share.

# cpu_record NAME -- CMD...: records with --cpu --off-cpu into $work/cpu/NAME, draws it.
cpu_record() {
  local name=$1; shift 2
  local dir=$work/cpu/$name
  mkdir -p "$out/cpu"
  # 999 Hz: mock_transformer spins only ~10 ms in its syncs, one sample or none at 99 Hz.
  timeout 300 "$gp" record -o "$dir" --force --cpu --off-cpu --freq 999 -- "$@" \
    > "$work/cpu-$name.out" 2> "$work/cpu-$name.err"
  local rc=$?
  echo "== cpu $name: exit $rc; $(grep -h '^gpuperf: CPU:' "$work/cpu-$name.err")" | tee -a "$results"
  local problems=()
  [[ $rc -eq 0 ]] || problems+=("exit $rc")
  grep -q '^gpuperf: CPU:' "$work/cpu-$name.err" ||
    problems+=("no CPU samples: $(grep -m1 'gpuperf:' "$work/cpu-$name.err")")
  "$gp" flamegraph --weight all -o "$out/cpu/$name.svg" "$dir" 2>> "$work/cpu-$name.err" ||
    problems+=("flamegraph failed")
  "$gp" flamegraph --weight all --folded -o "$out/cpu/$name.folded" "$dir" 2>/dev/null
  # The main thread alone (its tid is the process's pid), without the idle pools beside it.
  local main_pid; main_pid=$(ls "$dir" | grep -v '^cpu\.' | sed -n 's/.*\.\([0-9]*\)\.gpt$/\1/p' | head -1)
  [[ -n $main_pid ]] && "$gp" flamegraph --weight all --tid "$main_pid" --title \
    "$name: the main thread's GPU, on-CPU and off-CPU time" -o "$out/cpu/$name.main.svg" "$dir" 2>/dev/null
  "$gp" report --sections cpu,sync "$dir" > "$out/cpu/$name.report.txt" 2>&1
  local folded=$out/cpu/$name.folded
  local gpu cpu off waits
  gpu=$(grep -c '\[GPU[0-9]*\] ' "$folded")
  cpu=$(grep -c ';\[cpu\] ' "$folded")
  off=$(grep -c ';\[off-cpu\] ' "$folded")
  waits=$(grep -E '\[(wait|spin): GPU sync\]' "$folded" | awk '{ s += $NF } END { print s + 0 }')
  [[ $gpu -gt 0 && $cpu -gt 0 && $off -gt 0 ]] ||
    problems+=("leaves: $gpu GPU, $cpu on-CPU, $off off-CPU paths")
  [[ $waits -gt 0 ]] || problems+=("no GPU sync waits found")
  echo "   $gpu GPU paths, $cpu on-CPU, $off off-CPU; waiting for the GPU: $((waits / 1000000)) ms" |
    tee -a "$results"
  note "cpu:$name" "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-GPU sync waits $((waits / 1000000)) ms; SVG in cpu/$name.svg}"
}

# The median of step_ms over runs of one configuration.
cpu_median_step() {
  sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

cpu_check() {
  if [[ $(id -u) -ne 0 ]]; then
    note cpu FAIL "not root: the eBPF CPU profiler needs root"
    return
  fi
  cpu_record mock_transformer -- "$ex/mock_transformer" --steps 20
  cpu_record pytorch_inference -- python3 "$src/examples/pytorch_transformer.py" --steps 20

  # The cost: alternating rounds of the same recording without and with --cpu --off-cpu, the
  # example running 1,000 steps (~3 s of inference after ~3 s of import and set-up), and a
  # profiled run of 50 steps beside them: the difference between the two profiled runs is
  # the steady state's (the import's one-off costs, such as naming the code objects it runs
  # once, cancel), which is what the budget is about.
  local plain=() profiled=() shares=() marginal=() r line
  for r in 1 2 3; do
    local long_cpu=0 long_wall=0
    for mode in plain profiled short; do
      local flags=() steps=1000
      [[ $mode != plain ]] && flags=(--cpu --off-cpu)
      [[ $mode == short ]] && steps=50
      local t0; t0=$(date +%s%N)
      line=$(GPUPERF_CPU_COST=1 timeout 300 "$gp" record -q --no-symbolize -o "$work/cpu/cost" --force "${flags[@]}" -- \
        python3 "$src/examples/pytorch_transformer.py" --steps "$steps" 2>"$work/cpu/cost.err" | grep 'gpuperf-example:')
      local wall_ns=$(( $(date +%s%N) - t0 ))
      if [[ $mode != plain ]]; then
        local cost; cost=$(grep -o 'kernel_ns=[0-9]* runs=[0-9]* drain_ns=[0-9]*' "$work/cpu/cost.err")
        if [[ -n $cost ]]; then
          local k d used share
          k=$(sed 's/.*kernel_ns=\([0-9]*\).*/\1/' <<< "$cost")
          d=$(sed 's/.*drain_ns=\([0-9]*\).*/\1/' <<< "$cost")
          used=$((k + d))
          share=$(awk -v u="$used" -v w="$wall_ns" 'BEGIN { printf "%.3f", u * 100 / w }')
          echo "   cost round $r $mode ($steps steps): profiler CPU $((used / 1000000)) ms ($cost) over $((wall_ns / 1000000)) ms wall: $share%" | tee -a "$results"
          if [[ $mode == profiled ]]; then
            shares+=("$share"); long_cpu=$used; long_wall=$wall_ns
          elif [[ $long_wall -gt $wall_ns ]]; then
            local m; m=$(awk -v a="$long_cpu" -v b="$used" -v wa="$long_wall" -v wb="$wall_ns" \
              'BEGIN { printf "%.3f", (a - b) * 100 / (wa - wb) }')
            marginal+=("$m")
            echo "   cost round $r: the 950 steps' own share: $m% ($(((long_cpu - used) / 1000000)) ms over $(((long_wall - wall_ns) / 1000000)) ms)" | tee -a "$results"
          fi
        fi
      fi
      [[ $mode == short ]] && continue
      local ms; ms=$(sed -n 's/.* step_ms=\([0-9.]*\).*/\1/p' <<< "$line")
      [[ -n $ms ]] || continue
      if [[ $mode == plain ]]; then plain+=("$ms"); else profiled+=("$ms"); fi
      echo "   cost round $r $mode: step_ms=$ms" | tee -a "$results"
    done
  done
  if [[ ${#plain[@]} -eq 0 || ${#profiled[@]} -eq 0 ]]; then
    note cpu:cost FAIL "the inference example did not run"
    return
  fi
  local a b pct
  a=$(printf '%s\n' "${plain[@]}" | cpu_median_step)
  b=$(printf '%s\n' "${profiled[@]}" | cpu_median_step)
  pct=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b / a - 1) * 100 }')
  echo "   cost: median step_ms $a without, $b with --cpu --off-cpu: $pct%" | tee -a "$results"
  local share_median marginal_median
  share_median=$(printf '%s\n' "${shares[@]:-100}" | cpu_median_step)
  marginal_median=$(printf '%s\n' "${marginal[@]:-100}" | cpu_median_step)
  echo "   cost: the profiler's own CPU time, median $share_median% of the whole run's wall time, $marginal_median% of the inference steps' (steady state)" | tee -a "$results"
  echo "step_ms without=$a with=$b overhead_pct=$pct profiler_cpu_share_pct=$share_median steady_state_share_pct=$marginal_median" > "$out/cpu/cost.txt"
  note cpu:cost "$(awk -v p="$marginal_median" 'BEGIN { print (p <= 1.0) ? "PASS" : "FAIL" }')" \
    "profiler CPU $marginal_median% of the inference steps' wall time (budget 1%; whole run with import $share_median%); step $a -> $b ms ($pct%, 3 rounds)"
}
