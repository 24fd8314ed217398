#!/usr/bin/env bash
# Timeline export benchmark: export time, output bytes per kernel and peak memory of
# `gpuperf export` in each format, on a synthetic trace of N kernels (default 10 M).
#   bench/export_bench.sh [BUILD_DIR] [KERNELS] [FORMATS...]
# FORMATS: any of perfetto-trace json json.gz (default: all three).
set -euo pipefail
build=${1:-build}
kernels=${2:-10000000}
shift $(( $# > 2 ? 2 : $# ))
formats=("${@:-perfetto-trace json json.gz}")
read -r -a formats <<< "${formats[*]}"
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-export-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$build/bench/gpuperf_synth" -o "$work/trace.gpt" --kernels "$kernels" >/dev/null
trace_bytes=$(stat -c %s "$work/trace.gpt")
printf "trace: %d kernels, %d bytes (%.1f B/kernel)\n" "$kernels" "$trace_bytes" \
  "$(echo "$trace_bytes / $kernels" | bc -l)"
printf "%-16s %10s %10s %14s %10s %12s\n" format wall_s cpu_s bytes B/kernel peak_RSS_MiB
for ext in "${formats[@]}"; do
  out="$work/out.$ext"
  /usr/bin/time -v "$build/gpuperf" export "$work/trace.gpt" -o "$out" \
    >/dev/null 2>"$work/time.txt"
  seconds=$(awk -F': ' '/Elapsed \(wall clock\)/ {n=split($2,t,":"); s=0; for(i=1;i<=n;i++) s=s*60+t[i]; print s}' "$work/time.txt")
  cpu=$(awk -F': ' '/User time|System time/ {s+=$2} END {print s}' "$work/time.txt")
  rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  bytes=$(stat -c %s "$out")
  printf "%-16s %10.2f %10.2f %14d %10.1f %12.1f\n" "$ext" "$seconds" "$cpu" "$bytes" \
    "$(echo "$bytes / $kernels" | bc -l)" "$(echo "$rss_kb / 1024" | bc -l)"
  rm -f "$out"
done
