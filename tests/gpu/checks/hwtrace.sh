# record --hw-trace on real CUDA (sourced by tests/gpu/run.sh): kernel times from the GPU's
# Hardware Event System (Blackwell and newer; src/inject/cupti/activity.h). launch_bound
# (200,000 launches) alternating, 3 rounds: not profiled, the CUPTI floor tracer (kernel
# records only, bench/cupti_floor), the default recording, --hw-trace.
# Where the GPU has it (kernel_times_from_hardware): every kernel joined, nothing lost. Where
# it has not (hw_trace_unavailable, e.g. an H100): one notice, and the same. Prints the median
# µs per launch of each way; no pass mark on them (docs/performance.md has the numbers).
hwtrace_check() {
  local rec=$work/rec/hwtrace problems=() round way said taken refused joined notices
  mkdir -p "$rec"
  : > "$work/hwtrace_times.txt"
  for round in 1 2 3; do
    for way in none floor default hw; do
      local flags=()
      [[ $way == hw ]] && flags=(--hw-trace)
      if [[ $way == none || $way == floor ]]; then
        local tracer=()
        [[ $way == floor ]] && tracer=(env "CUDA_INJECTION64_PATH=$bin/libcupti_floor.so")
        [[ $way == floor && ! -f $bin/libcupti_floor.so ]] && continue
        said=$(timeout 120 "${tracer[@]}" "$ex/launch_bound" --launches 200000 2> "$work/hwtrace_$way.err") ||
          problems+=("$way: launch_bound exit $?")
      else
        said=$(timeout 120 "$gp" record -o "$rec/$way" --force "${flags[@]}" -- \
          "$ex/launch_bound" --launches 200000 2> "$work/hwtrace_$way.err") ||
          problems+=("$way: record exit $?")
      fi
      echo "$way $(sed -n 's/.* us_per_launch_p50=\([0-9.]*\).*/\1/p' <<<"$said")" >> "$work/hwtrace_times.txt"
    done
  done
  for way in default hw; do
    "$gp" flamegraph --folded -o "$work/hwtrace_$way.folded" "$rec/$way" 2> "$work/hwtrace_$way.flame.err"
    joined=$(joined_of "$work/hwtrace_$way.flame.err")
    all_joined "$joined" 200000 ||
      problems+=("$way: not every kernel joined (${joined:-none})")
    grep -q "lost      nothing" "$work/hwtrace_$way.err" ||
      problems+=("$way lost: $(grep -A1 -i lost "$work/hwtrace_$way.err" | tr '\n' ' ')")
  done
  taken=$(trace_stat "$rec/hw" kernel_times_from_hardware)
  refused=$(trace_stat "$rec/hw" hw_trace_unavailable)
  notices=$(grep -c -- "--hw-trace: no hardware kernel times here" "$work/hwtrace_hw.err")
  if [[ $taken == 1 ]]; then
    [[ $notices == 0 ]] || problems+=("hardware times taken, yet a notice")
  elif [[ $refused == 1 ]]; then
    [[ $notices == 1 ]] || problems+=("refused with $notices notices, want 1")
  else
    problems+=("--hw-trace neither taken nor refused (taken '$taken', refused '$refused')")
  fi
  local medians
  medians=$(awk '{v[$1] = v[$1] " " $2} END {for (w in v) print w v[w]}' "$work/hwtrace_times.txt" |
    while read -r w a b c; do printf '%s %s µs (%s %s %s); ' "$w" "$(printf '%s\n' "$a" "$b" "$c" | sort -g | sed -n 2p)" "$a" "$b" "$c"; done)
  said="hardware times $([[ $taken == 1 ]] && echo taken || echo "refused: $(grep -h -- '--hw-trace:' "$work/hwtrace_hw.err" | head -1)"); ${joined:-}; µs per launch, median of 3: $medians"
  echo "   hwtrace: $said" >> "$results"
  note hwtrace "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" "${problems[*]:-$said}"
}
