#!/usr/bin/env bash
# What a launch costs the launching thread under each recording mode, with the fake CUPTI
# (tests/fakes): `fake_cuda_app many N` times its launch loop in the launching thread's CPU
# time (cpu_ns_per_launch: gpuperf's callbacks run on that thread; the clock of other
# threads and of the machine's other load does not count), under
#   none      no injection at all (the fake's own cost),
#   nostacks  record --no-stacks (callbacks and API records, no stack),
#   full      record (a stack at every launch),
#   sampled   record --sample-launches 100/s,
#   flight    record --flight 60s (full stacks, records kept in memory),
#   flight_s  record --flight 60s --sample-launches 100/s.
# Rounds alternate the modes so that load on the machine hits them alike; the median per
# mode is printed, and the difference to `nostacks` is what the stack (or its sampling) adds.
#   bench/flight/sample_cost.sh BUILD_DIR [LAUNCHES=200000] [ROUNDS=5]
set -u
build=${1:?build dir}
launches=${2:-200000}
rounds=${3:-5}
gp=$build/gpuperf
lib=$build/src/inject/libgpuperf_inject.so
app=$build/tests/fakes/fake_cuda_app
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
modes="none nostacks full sampled flight flight_s"

run_mode() {
  local mode=$1 flags=()
  case $mode in
    none) env -u CUDA_INJECTION64_PATH "$app" many "$launches" 2>/dev/null; return ;;
    nostacks) flags=(--no-stacks) ;;
    full) flags=() ;;
    sampled) flags=(--sample-launches 100/s) ;;
    flight) flags=(--flight 60s) ;;
    flight_s) flags=(--flight 60s --sample-launches 100/s) ;;
  esac
  "$gp" record -q -f -o "$work/$mode" --no-symbolize --inject-lib "$lib" "${flags[@]}" -- \
    "$app" many "$launches" 2>/dev/null
}

for ((r = 0; r < rounds; r++)); do
  for mode in $modes; do
    ns=$(run_mode "$mode" | sed -n 's/^fake-app-timing: .*cpu_ns_per_launch=\([0-9.]*\).*/\1/p')
    echo "$mode $ns" >> "$work/samples"
  done
done
printf "%-9s %s\n" mode "median CPU ns per launch, launching thread ($rounds rounds of $launches launches)"
for mode in $modes; do
  median=$(awk -v m="$mode" '$1 == m {print $2}' "$work/samples" | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
  printf "%-9s %s\n" "$mode" "$median"
done
