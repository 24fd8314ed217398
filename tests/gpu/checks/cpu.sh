# CPU time beside GPU time on the GPU machine (`record --cpu --off-cpu`, docs/cpu-profiling.md).
# Sourced by tests/gpu/run.sh, which defines record/note/want, $gp, $ex, $src, $work, $out.
#  1. mock_transformer and the PyTorch inference example recorded with --cpu --off-cpu: the
#     CPU profiler started (as root), the unified SVGs (--weight all) and folded stacks go
#     to $out/cpu/, and the CPU's waits for the GPU appear ([wait: GPU sync] blocked or
#     [spin: GPU sync] spinning) next to GPU kernels under the same frames.
#  2. The profiler's cost on PyTorch inference: step_ms under `record` with and without
#     --cpu --off-cpu, alternating, 3 rounds each, median ratio; the budget is 1%.

# cpu_record NAME -- CMD...: records with --cpu --off-cpu into $work/cpu/NAME, draws it.
cpu_record() {
  local name=$1; shift 2
  local dir=$work/cpu/$name
  mkdir -p "$out/cpu"
  timeout 300 "$gp" record -o "$dir" --force --cpu --off-cpu -- "$@" \
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

  # The cost: alternating rounds, the same recording but for --cpu --off-cpu.
  local plain=() profiled=() r line
  for r in 1 2 3; do
    for mode in plain profiled; do
      local flags=()
      [[ $mode == profiled ]] && flags=(--cpu --off-cpu)
      line=$(timeout 300 "$gp" record -q --no-symbolize -o "$work/cpu/cost" --force "${flags[@]}" -- \
        python3 "$src/examples/pytorch_transformer.py" --steps 50 2>/dev/null | grep 'gpuperf-example:')
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
  echo "step_ms without=$a with=$b overhead_pct=$pct" > "$out/cpu/cost.txt"
  note cpu:cost "$(awk -v p="$pct" 'BEGIN { print (p <= 1.0) ? "PASS" : "FAIL" }')" \
    "PyTorch inference step $a -> $b ms ($pct%, budget 1%)"
}
