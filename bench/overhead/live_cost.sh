#!/usr/bin/env bash
# What the live page (docs/live.md) adds to a recording: the same program recorded with the
# page on and off (GPUPERF_LIVE=off), alternated ROUNDS times; per mode the median wall time
# and CPU time (user + system, the recorded program and gpuperf together), and, with the page
# on, the writer thread's own time folding records into it (the trace's live_update_ns)
# per kernel. App threads do nothing for the page, so CPU time is where a cost would show.
#
# usage: bench/overhead/live_cost.sh GPUPERF INJECT_LIB ROUNDS -- PROGRAM ARGS...
#   fake (CI):  bench/overhead/live_cost.sh build/gpuperf build/src/inject/libgpuperf_inject.so 5 \
#                 -- build/tests/fakes/fake_cuda_app many 1000000
#   GPU:        bench/overhead/live_cost.sh BIN/gpuperf BIN/libgpuperf_inject.so 5 \
#                 -- EXAMPLES/launch_bound --launches 1000000
set -uo pipefail
if [[ $# -lt 5 || $4 != -- ]]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
gp=$1 lib=$2 rounds=$3
shift 4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GPUPERF_LIVE_DIR=$work/live
TIMEFORMAT='%R %U %S'

for ((r = 0; r < rounds; r++)); do
  for mode in on off; do
    rm -rf "$work/trace"
    { time GPUPERF_LIVE=$mode "$gp" record -q -o "$work/trace" --no-symbolize --inject-lib "$lib" \
        -- "$@" > /dev/null 2>&1; } 2>> "$work/$mode.times"
    if [[ $mode == on ]]; then
      "$gp" dump "$work/trace" 2>/dev/null | awk '
        /^kernel / { kernels++ }
        /# live_update_ns$/ { sub(/.*value=/, ""); sub(/ .*/, ""); ns = $0 }
        END { printf "%d %d\n", ns, kernels }' >> "$work/live_ns"
    fi
  done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for mode in on off; do
  wall=$(awk '{ print $1 }' "$work/$mode.times" | median)
  cpu=$(awk '{ print $2 + $3 }' "$work/$mode.times" | median)
  printf 'live %-3s  wall %6.3f s  cpu %6.3f s  (median of %d)\n' "$mode" "$wall" "$cpu" "$rounds"
done
per_kernel=$(awk '$2 > 0 { print $1 / $2 }' "$work/live_ns" | median)
total_ms=$(awk '{ print $1 / 1e6 }' "$work/live_ns" | median)
printf 'live page writer time: %.1f ms per run, %.1f ns per kernel (median)\n' "$total_ms" "$per_kernel"
