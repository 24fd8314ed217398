#!/usr/bin/env bash
# Big-run benchmark (issue 31): wall time, CPU time and peak memory of the offline commands on
# a synthetic trace of KERNELS kernels (default 10 M), each command REPEATS times (default 3),
# medians with [min, max]. With --ranks N the trace is a directory of N rank traces
# (KERNELS in all, split evenly), as a job of N GPUs leaves it.
#   bench/bigrun_bench.sh [--build DIR] [--kernels N] [--repeats N] [--ranks N]
#                         [--trace PATH] [--keep DIR] [COMMAND...]
# COMMAND: report flamegraph pprof perfetto multi split (default: report flamegraph pprof
# perfetto multi; with --ranks: split report flamegraph pprof). `multi` writes the report,
# the flame graph and the Perfetto timeline from one read of the trace.
# --trace reuses a trace (file or directory) instead of generating one; --keep writes the
# generated trace there and leaves it. Timing is /usr/bin/time -v around the whole process.
set -euo pipefail
build=build
kernels=10000000
repeats=3
ranks=0
trace=
keep=
commands=()
while (($#)); do
  case $1 in
    --build) build=$2; shift 2 ;;
    --kernels) kernels=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --trace) trace=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "bigrun_bench.sh: unknown option $1" >&2; exit 2 ;;
    *) commands+=("$1"); shift ;;
  esac
done
if ((${#commands[@]} == 0)); then
  if ((ranks > 0)); then commands=(split report flamegraph pprof); else
    commands=(report flamegraph pprof perfetto multi); fi
fi
gp=$build/gpuperf
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-bigrun-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The trace: one file, or one file per rank in a directory.
if [[ -z $trace ]]; then
  trace=${keep:-$work/trace}
  if ((ranks > 0)); then
    mkdir -p "$trace"
    for ((r = 0; r < ranks; r++)); do
      "$build/bench/gpuperf_synth" -o "$trace/rank$r.gpt" --kernels $((kernels / ranks)) \
        --pid $((10000 + 100 * r)) --seed $((r + 1)) --rank "$r" --world-size "$ranks" >/dev/null
    done
  else
    trace=$trace.gpt
    "$build/bench/gpuperf_synth" -o "$trace" --kernels "$kernels" >/dev/null
  fi
fi
trace_bytes=$(du -sb "$trace" | cut -f1)
printf "trace: %s kernels%s, %d bytes (%.1f B/kernel)\n" "$kernels" \
  "$( ((ranks > 0)) && echo " in $ranks ranks")" "$trace_bytes" \
  "$(echo "$trace_bytes / $kernels" | bc -l)"
printf "machine: %s cores, load average %s (1, 5, 15 min) at the start\n" "$(nproc)" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"

# The command line of each benchmark; outputs go to $work/out.*.
command_line() {
  case $1 in
    report) echo "$gp report $trace -o $work/out.txt" ;;
    split) echo "$gp report $trace --split-by rank -o $work/out.txt" ;;
    flamegraph) echo "$gp flamegraph $trace -o $work/out.svg" ;;
    pprof) echo "$gp export $trace -o $work/out.pb.gz" ;;
    perfetto) echo "$gp export $trace -o $work/out.perfetto-trace" ;;
    multi)
      echo "$gp report $trace -o $work/out.txt -o $work/out.svg -o $work/out.perfetto-trace" ;;
    *) echo "bigrun_bench.sh: unknown command $1" >&2; exit 2 ;;
  esac
}

# Median, min and max of numbers on stdin, one a line.
spread() {
  sort -g | awk '{v[NR]=$1} END {m = NR % 2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2;
                  printf "%.2f [%.2f, %.2f]", m, v[1], v[NR]}'
}

printf "%-10s %-22s %-22s %-8s %-22s %10s %12s\n" command "wall s" "user s" "sys s" \
  "peak RSS MiB" "B/kernel" "output MB"
for name in "${commands[@]}"; do
  line=$(command_line "$name")
  : >"$work/wall"; : >"$work/user"; : >"$work/sys"; : >"$work/rss"
  failed=
  for ((i = 0; i < repeats; i++)); do
    rm -f "$work"/out.*
    # shellcheck disable=SC2086 # the command line is split into words on purpose
    if ! /usr/bin/time -v $line >"$work/stdout" 2>"$work/time.txt"; then
      failed=$(grep -m1 'error' "$work/time.txt" || echo "exit status non-zero")
      break
    fi
    awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0;
                for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$work/time.txt" >>"$work/wall"
    awk -F': ' '/User time/ {print $2}' "$work/time.txt" >>"$work/user"
    awk -F': ' '/System time/ {print $2}' "$work/time.txt" >>"$work/sys"
    awk -F': ' '/Maximum resident set size/ {print $2 / 1024}' "$work/time.txt" >>"$work/rss"
  done
  if [[ -n $failed ]]; then
    printf "%-10s failed: %s\n" "$name" "$failed"
    continue
  fi
  out_bytes=$(cat "$work"/out.* 2>/dev/null | wc -c)
  rss_max=$(sort -g "$work/rss" | tail -1)
  printf "%-10s %-22s %-22s %-8s %-22s %10.1f %12.2f\n" "$name" "$(spread <"$work/wall")" \
    "$(spread <"$work/user")" "$(sort -g "$work/sys" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')" \
    "$(spread <"$work/rss")" "$(echo "$rss_max * 1048576 / $kernels" | bc -l)" \
    "$(echo "$out_bytes / 1000000" | bc -l)"
done
printf "machine: load average %s at the end\n" "$(cut -d' ' -f1-3 /proc/loadavg)"
