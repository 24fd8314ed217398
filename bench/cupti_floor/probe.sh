#!/usr/bin/env bash
# Prices CUPTI's features one at a time on the launch-bound example: runs it with no
# profiler, under the floor tracer, under libcupti_probe.so with each PROBE set below, and
# (when GPUPERF is set) under `gpuperf record` in each RECORD_MODES entry, in alternation
# for ROUNDS rounds. Prints the median µs per launch and its difference to the floor.
#
# usage: bench/cupti_floor/probe.sh LIBDIR LAUNCH_BOUND [ROUNDS]
#   LIBDIR        holds libcupti_floor.so and libcupti_probe.so (build.sh)
# env: PROBES (';'-separated PROBE values; default below), LAUNCHES (default 200000),
#      GPUPERF (a gpuperf binary) and RECORD_MODES (';'-separated `record` option sets)
#      KEYS (summary fields to tabulate; default: us_per_launch_p50, the median over batches
#      of launches; cpu_us_per_launch, the launching thread's CPU time; us_per_launch, the
#      whole loop), PIN (a taskset CPU list for every run)
set -uo pipefail
if [[ $# -lt 2 ]]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
libdir=$(cd "$1" && pwd)
app=$2
rounds=${3:-5}
launches=${LAUNCHES:-200000}
default_probes="ts;rt_act;rt_act,drv_act;cb_rt;cb_rt,exit_off;cb_rt,cb_drv;cb_rt_all;cb_rt_all,cb_drv_all;cb_rt,clock;cb_rt,unw;cb_rt,fp"
IFS=';' read -r -a probes <<< "${PROBES:-$default_probes}"
record_modes=()
[[ -n ${GPUPERF:-} ]] && IFS=';' read -r -a record_modes <<< "${RECORD_MODES:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

names=(base floor)
for p in "${probes[@]}"; do names+=("probe:$p"); done
for m in "${record_modes[@]}"; do names+=("record:$m"); done

pin=()
[[ -n ${PIN:-} ]] && pin=(taskset -c "$PIN")

run_one() {  # NAME -> the example's summary line (or the error's last lines)
  local name=$1
  case $name in
    base) "${pin[@]}" "$app" --launches "$launches" ;;
    floor) CUDA_INJECTION64_PATH=$libdir/libcupti_floor.so "${pin[@]}" "$app" --launches "$launches" ;;
    probe:*) PROBE=${name#probe:} CUDA_INJECTION64_PATH=$libdir/libcupti_probe.so \
      "${pin[@]}" "$app" --launches "$launches" ;;
    record:*)
      # shellcheck disable=SC2086  # the mode is a list of options
      "${pin[@]}" "$GPUPERF" record -o "$work/trace" --force --no-symbolize ${name#record:} -- \
        "$app" --launches "$launches" ;;
  esac 2>&1 | grep -m1 '^gpuperf-example:' || echo "failed: $name"
}

"$app" --launches 1000 > /dev/null 2>&1  # warm-up: driver load, JIT caches
for ((r = 0; r < rounds; r++)); do
  for i in "${!names[@]}"; do
    run_one "${names[$i]}" >> "$work/$i"
  done
done

# median KEY FILE: the median of KEY=value over the runs in FILE
values() { grep -o "$1=[0-9.]*" "$2" | cut -d= -f2; }
median() { values "$1" "$2" | sort -g | awk '{v[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
for key in ${KEYS:-us_per_launch_p50 cpu_us_per_launch us_per_launch}; do
  floor=$(median "$key" "$work/1")
  echo
  printf '%-44s %10s %10s %8s  %s\n' "mode ($key)" "µs" vs_floor spread runs
  for i in "${!names[@]}"; do
    m=$(median "$key" "$work/$i")
    spread=$(values "$key" "$work/$i" | sort -g | awk -v m="$m" 'NR==1{lo=$1} {hi=$1} END {if (NR && m>0) printf "%.1f%%", 100*(hi-lo)/m; else print "-"}')
    printf '%-44s %10.3f %+10.3f %8s  %s\n' "${names[$i]}" "$m" \
      "$(awk -v a="$m" -v b="$floor" 'BEGIN{print a-b}')" "$spread" \
      "$(values "$key" "$work/$i" | xargs printf '%.2f ')"
  done
done
grep -h '^failed' "$work"/* | sort | uniq -c
