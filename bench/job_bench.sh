#!/usr/bin/env bash
# A thousand ranks on one machine (docs/performance.md, "A thousand ranks"): the synthetic
# job of `gpuperf_synth --job` (default 1,024 ranks on 128 hosts whose clocks are seconds
# apart, 200 k kernels and 2,000 all-reduces per rank, NCCL plugin records), then for each
# command its wall time, CPU time (user + system), peak memory and the machine's load
# average before it. On a shared machine wall time follows the load: CPU time is the figure
# to compare across runs.
#   bench/job_bench.sh [BUILD_DIR] [RANKS] [HOSTS] [KERNELS_PER_RANK] [COMMANDS...]
# COMMANDS: any of split insights export summary report (default: split insights export).
# JOB_DIR=DIR keeps the generated job there (and reuses it when it is there already).
set -euo pipefail
build=${1:-build}
ranks=${2:-1024}
hosts=${3:-128}
kernels=${4:-200000}
shift $(( $# > 4 ? 4 : $# ))
commands=("${@:-split insights export}")
read -r -a commands <<< "${commands[*]}"
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-job-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
job=${JOB_DIR:-$work/job}

if ! compgen -G "$job/rank*.gpt" > /dev/null; then
  start=$SECONDS
  "$build/bench/gpuperf_synth" --job "$job" --ranks "$ranks" --hosts "$hosts" \
    --kernels-per-rank "$kernels" --collectives-per-rank 2000
  echo "job: generated in $((SECONDS - start)) s"
fi
echo "job: $ranks ranks on $hosts hosts, $kernels kernels per rank, $(du -sh "$job" | cut -f1) of traces"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
printf "%-10s %8s %8s %8s %12s  %s\n" command wall_s cpu_s sys_s peak_RSS_MiB "load before (1, 5, 15 min)"
for command in "${commands[@]}"; do
  case $command in
    split) args=(report "$job" --split-by rank -o "$work/out.txt") ;;
    insights) args=(report "$job" --insights -o "$work/out.txt") ;;
    report) args=(report "$job" -o "$work/out.txt") ;;
    export) rm -rf "$work/dataset"; args=(export "$job" --format parquet -o "$work/dataset") ;;
    summary) args=(report "$job" --summary -o "$work/summary.json") ;;
    *) echo "unknown command $command" >&2; exit 2 ;;
  esac
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  /usr/bin/time -v "$build/gpuperf" "${args[@]}" > /dev/null 2> "$work/time.txt" ||
    { echo "$command failed: $(grep -v -E '^\s' "$work/time.txt" | tail -3)"; continue; }
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$work/time.txt")
  user=$(awk -F': ' '/User time/ {print $2}' "$work/time.txt")
  sys=$(awk -F': ' '/System time/ {print $2}' "$work/time.txt")
  rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  printf "%-10s %8.1f %8.1f %8.1f %12.0f  %s\n" "$command" "$wall" \
    "$(echo "$user + $sys" | bc -l)" "$sys" "$(echo "$rss_kb / 1024" | bc -l)" "$load"
  rm -rf "$work/out.txt" "$work/dataset" "$work/summary.json"
done
