#!/usr/bin/env bash
# What the CPU profiler costs a program (`record --cpu --off-cpu`, 99 Hz):
#  - wall time: alternating runs of the program alone and under `gpuperf record --cpu
#    --off-cpu`, so drift of the machine hits both alike; every round and the median of the
#    per-round ratios (meaningful on a quiet machine);
#  - CPU time, which other load on the machine moves less: the program's own user+sys time
#    (when it prints cpu_seconds=, as switchy does; the BPF programs run in the switching
#    threads' context, so their time is in it), alone and profiled;
#  - with STATS=1, also the profiler's BPF programs' run time (the kernel's statistics,
#    GPUPERF_CPU_COST=1) plus its draining thread's, over the program's own CPU time. The
#    statistics themselves cost two clock reads per program run (~150 ns in the VMs
#    measured), which the program's CPU time then includes: leave them off to measure
#    the overhead, on to split it.
#
# usage: bench/cpu_overhead/run.sh GPUPERF [ROUNDS=5] [-- COMMAND...]
#   default COMMAND: the context-switch-heavy build/bench/cpu_switchy 2 100000 5000
#   The command's run time is what it prints as "seconds=N" (its own timing of the work,
#   without start-up), else the wall time of the whole run.
# env: GPUPERF_OPTIONS (default "--cpu --off-cpu"), PIN (a taskset CPU list), STATS=1
# Needs root (or CAP_BPF+CAP_PERFMON) for the profiler.
set -uo pipefail
if [[ $# -lt 1 ]]; then sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; fi
gp=$1; shift
rounds=5
if [[ $# -gt 0 && $1 != -- ]]; then rounds=$1; shift; fi
[[ ${1:-} == -- ]] && shift
repo=$(cd "$(dirname "$0")/../.." && pwd)
cmd=("$@")
[[ ${#cmd[@]} -eq 0 ]] && cmd=("$repo/build/bench/cpu_switchy" 2 100000 5000)
options=${GPUPERF_OPTIONS:---cpu --off-cpu}
pin=()
[[ -n ${PIN:-} ]] && pin=(taskset -c "$PIN")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run LABEL ARGS... -> seconds (the command's own "seconds=", else wall time)
run() {
  local start end out
  start=$(date +%s.%N)
  out=$("${pin[@]}" "$@" 2>"$work/err")
  end=$(date +%s.%N)
  local own; own=$(grep -o 'seconds=[0-9.]*' <<< "$out" | head -1 | cut -d= -f2)
  if [[ -n $own ]]; then echo "$own"; else awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'; fi
  grep -o 'switches_per_s=[0-9]*' <<< "$out" >> "$work/rates"
  grep -o 'cpu_seconds=[0-9.]*' <<< "$out" | cut -d= -f2 > "$work/cpu_seconds"
}

"${cmd[@]}" >/dev/null 2>&1  # warm-up
echo "round  alone_s   profiled_s  ratio  (cpu_s alone, profiled)  profiler cost"
for ((r = 1; r <= rounds; r++)); do
  alone=$(run "${cmd[@]}")
  alone_cpu=$(cat "$work/cpu_seconds" 2>/dev/null)
  # shellcheck disable=SC2086  # options are a list
  profiled=$(GPUPERF_CPU_COST=${STATS:-0} run "$gp" record -q --no-symbolize -o "$work/rec" --force $options -- "${cmd[@]}")
  grep -q "recording the GPU only\|needs root" "$work/err" && { echo "the CPU profiler did not start: $(cat "$work/err")" >&2; exit 1; }
  ratio=$(awk -v a="$alone" -v b="$profiled" 'BEGIN { print b / a }')
  cost=$(grep -o 'kernel_ns=[0-9]* runs=[0-9]* drain_ns=[0-9]*' "$work/err")
  share=""
  if [[ -s $work/cpu_seconds && -n $cost ]]; then
    share=$(awk -v c="$cost" -v s="$(cat "$work/cpu_seconds")" 'BEGIN {
      split(c, f, /[ =]/); printf "%.3f", 100 * (f[2] + f[6]) / (s * 1e9) }')
    echo "$share" >> "$work/shares"
  fi
  note=""
  [[ -n $share ]] && note="  = $share% of the program CPU time"
  profiled_cpu=$(cat "$work/cpu_seconds" 2>/dev/null)
  if [[ -n $alone_cpu && -n $profiled_cpu ]]; then
    awk -v a="$alone_cpu" -v b="$profiled_cpu" 'BEGIN { print b / a }' >> "$work/cpu_ratios"
  fi
  printf "%5d  %8.4f  %10.4f  %.4f  (%s, %s)  %s%s\n" "$r" "$alone" "$profiled" "$ratio" \
    "${alone_cpu:--}" "${profiled_cpu:--}" "$cost" "$note"
  echo "$ratio" >> "$work/ratios"
done
median=$(sort -n "$work/ratios" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
rate=$(sort -t= -k2 -n "$work/rates" | awk -F= '{ v[NR] = $2 } END { print v[int((NR + 1) / 2)] }')
printf "median overhead: %+.2f%% wall time over %d rounds (%s; %s context switches/s)\n" \
  "$(awk -v m="$median" 'BEGIN { print (m - 1) * 100 }')" "$rounds" "$options" "${rate:-?}"
if [[ -s $work/cpu_ratios ]]; then
  printf "median overhead: %+.2f%% of the program CPU time (its own user+sys time)\n" \
    "$(sort -n "$work/cpu_ratios" | awk '{ v[NR] = $1 } END { print (v[int((NR + 1) / 2)] - 1) * 100 }')"
fi
if [[ -s $work/shares ]]; then
  printf "median cost: %s%% of the program's CPU time in the profiler (kernel + draining)\n" \
    "$(sort -n "$work/shares" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
fi
