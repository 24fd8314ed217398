# The flight recorder and sampled launch stacks on the GPU (docs/flight-recorder.md).
#  1. launch_bound (1 thread, 10 s) under `record --flight 2s`; after 5 s `gpuperf dump-now`
#     must print a readable dump whose kernels span about the window (1.5 to 2.2 s, none
#     dropped by the ring), with stacks; the exit dump must be there too; `report` reads both.
#  2. launch_bound --launches 200000 under `record` and `record --sample-launches 100/s`,
#     alternating, 3 rounds: every kernel recorded both ways; medians of us_per_launch_p50
#     and cpu_us_per_launch. Fails if sampling costs more than full stacks (+10%).
# Writes $out/flight/: the dump-now output, spans, the timing table.
flight_check() {
  local dir=$work/rec/flight fout=$out/flight problems=()
  mkdir -p "$fout"
  echo "== flight: launch_bound under --flight 2s, dump-now after 5 s" | tee -a "$results"
  "$gp" record -o "$dir" --force --flight 2s -- "$ex/launch_bound" --seconds 10 \
    > "$work/flight.out" 2> "$work/flight.err" &
  local record_pid=$! app=""
  for _ in $(seq 100); do
    app=$(pgrep -P "$record_pid" | head -1)
    [[ -n $app ]] && break
    sleep 0.1
  done
  sleep 5
  local t0=$SECONDS dumped=""
  [[ -n $app ]] && dumped=$("$gp" dump-now "$app" 2> "$fout/dump-now.err")
  local dump_rc=$? dump_s=$((SECONDS - t0))
  wait "$record_pid"
  local rc=$?
  [[ $rc -eq 0 ]] || problems+=("record exited $rc")
  [[ $dump_rc -eq 0 && -s $dumped ]] || problems+=("dump-now failed ($dump_rc): $(tail -1 "$fout/dump-now.err")")
  # span FILE: kernels, seconds from the first kernel's end to the last's, evicted records,
  # the ring's peak bytes (with the kernels: what a launch costs the ring on a real GPU).
  span() {
    "$gp" dump "$1" 2>/dev/null | awk '
      /^kernel / { for (i = 1; i <= NF; i++) if ($i ~ /^end_ns=/) { e = substr($i, 8) + 0;
                   if (n++ == 0 || e < lo) lo = e; if (e > hi) hi = e } }
      /# flight_evicted_records$/ { for (i = 1; i <= NF; i++) if ($i ~ /^value=/) ev = substr($i, 7) }
      /# flight_memory_peak_bytes$/ { for (i = 1; i <= NF; i++) if ($i ~ /^value=/) pk = substr($i, 7) }
      END { printf "%d %.3f %d %d\n", n, (hi - lo) / 1e9, ev + 0, pk + 0 }'
  }
  local mid="" last=""
  if [[ -s $dumped ]]; then
    mid=$(span "$dumped")
    echo "   dump-now ($dump_s s): $dumped: kernels, span s, evicted, ring peak bytes = $mid" | tee -a "$results"
    local kernels seconds evicted peak
    read -r kernels seconds evicted peak <<<"$mid"
    [[ $kernels -gt 0 ]] || problems+=("the mid-run dump has no kernels")
    awk -v s="$seconds" 'BEGIN { exit !(s >= 1.5 && s <= 2.2) }' || problems+=("mid-run dump spans $seconds s, want about 2")
    [[ $evicted -eq 0 ]] || problems+=("the ring dropped $evicted records of the window")
    "$gp" report "$dumped" > "$fout/dump-now.report" 2>&1 || problems+=("report of the mid-run dump failed")
    "$gp" flamegraph --folded -o "$fout/dump-now.folded" "$dumped" 2>/dev/null
    grep -q 'launch_bound\|main' "$fout/dump-now.folded" 2>/dev/null || problems+=("the mid-run dump's stacks lack the program's frames")
  fi
  local exit_dump; exit_dump=$(ls "$dir" 2>/dev/null | grep '\.flight-[0-9]*\.gpt$' | sort -V | tail -1)
  exit_dump=${exit_dump:+$dir/$exit_dump}
  if [[ -n $exit_dump && $exit_dump != "$dumped" ]]; then
    last=$(span "$exit_dump")
    echo "   exit dump: $exit_dump: kernels, span s, evicted, ring peak bytes = $last" | tee -a "$results"
    "$gp" report "$exit_dump" > "$fout/exit.report" 2>&1 || problems+=("report of the exit dump failed")
  else
    problems+=("no exit dump")
  fi
  grep -E "^gpuperf: |^  " "$work/flight.err" | sed 's/^/   /' >> "$results"
  cp "$work/flight.err" "$fout/record.err"

  # Sampled vs full stacks, alternating.
  echo "== flight: launch_bound 200000 launches, default vs --sample-launches 100/s" | tee -a "$results"
  local mode round
  : > "$fout/timing.txt"
  for round in 1 2 3; do
    for mode in full sampled; do
      local flags=()
      [[ $mode == sampled ]] && flags=(--sample-launches 100/s)
      timeout 120 "$gp" record -o "$work/rec/flight-$mode" --force --no-symbolize "${flags[@]}" -- \
        "$ex/launch_bound" --launches 200000 > "$work/flight-$mode.out" 2> "$work/flight-$mode.err"
      local said recorded launched
      said=$(grep -h 'gpuperf-example:' "$work/flight-$mode.out" | head -1)
      # The example's own count: the loop's launches plus one warm-up launch per stream.
      launched=$(sed -n 's/.* kernels=\([0-9]*\) .*/\1/p' <<<"$said")
      recorded=$(sed -n 's/^  kernels *\([0-9,]*\).*/\1/p' "$work/flight-$mode.err" | tr -d ,)
      [[ -n $launched && ${recorded:-0} -eq $launched ]] ||
        problems+=("$mode round $round recorded ${recorded:-?} of ${launched:-?} kernels")
      echo "$mode $(sed -n 's/.* us_per_launch_p50=\([0-9.]*\).*/\1/p' <<<"$said") $(sed -n 's/.* cpu_us_per_launch=\([0-9.]*\).*/\1/p' <<<"$said")" >> "$fout/timing.txt"
    done
  done
  median() { awk -v m="$1" -v c="$2" '$1 == m {print $c}' "$fout/timing.txt" | sort -n | sed -n 2p; }
  local full_p50 sampled_p50 full_cpu sampled_cpu
  full_p50=$(median full 2); sampled_p50=$(median sampled 2)
  full_cpu=$(median full 3); sampled_cpu=$(median sampled 3)
  echo "   us per launch (median batch / CPU): full $full_p50 / $full_cpu, sampled 100/s $sampled_p50 / $sampled_cpu" | tee -a "$results"
  awk -v f="$full_p50" -v s="$sampled_p50" 'BEGIN { exit !(f > 0 && s > 0 && s <= f * 1.1) }' \
    || problems+=("sampled stacks cost more than full ones ($sampled_p50 vs $full_p50 us)")
  note flight "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-dump-now ${mid:-?} (kernels span evicted peak), exit ${last:-?}; us/launch full $full_p50 sampled $sampled_p50}"
}
