#!/usr/bin/env bash
# Paired, in-process cost of a profiler per launch: launch_bound --ab alternates batches of
# 1024 launches with the profiler's extra work switched on and off (on: the mode as
# configured; off: kernel records only, what the CUPTI floor tracer does), so machine drift,
# which moves separate runs by more than the effect, hits both sides alike. Prints, per mode,
# the median over ROUNDS runs of: µs per launch on, off, and the difference (= the cost
# above the floor).
#
# usage: bench/overhead/ab.sh LIBDIR EXAMPLES_DIR [ROUNDS]
#   LIBDIR        gpuperf, libgpuperf_inject.so, libcupti_probe.so (scripts/stage-gpu.sh)
# env: PROBES (';'-separated cupti_probe feature sets, see bench/cupti_floor/cupti_probe.cc),
#      MODES (';'-separated entries "NAME=ENV... -- RECORD OPTIONS" for gpuperf record),
#      LAUNCHES (default 200000), PIN (a taskset CPU list)
set -uo pipefail
if [[ $# -lt 2 ]]; then
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
libdir=$(cd "$1" && pwd)
app=$(cd "$2" && pwd)/launch_bound
rounds=${3:-3}
launches=${LAUNCHES:-200000}
default_probes="cb_rt;cb_rt,cb_drv;cb_rt_all,cb_drv_all;rt_act;rt_act,drv_act;cb_rt,clock;cb_rt,unw;cb_rt,fp"
default_modes="default=;cupti-api=GPUPERF_API_SOURCE=cupti;no-stacks= -- --no-stacks;stacks-only= -- --activities kernel;no-driver= -- --activities kernel,memcpy,memset,runtime,sync,memory,nvtx,overhead"
IFS=';' read -r -a probes <<< "${PROBES-$default_probes}"
IFS=';' read -r -a modes <<< "${MODES-$default_modes}"
pin=()
[[ -n ${PIN:-} ]] && pin=(taskset -c "$PIN")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

names=()
for p in "${probes[@]}"; do [[ -n $p ]] && names+=("probe:$p"); done
for m in "${modes[@]}"; do [[ -n $m ]] && names+=("gpuperf:$m"); done

run_one() {  # ENTRY -> the example's summary line
  local entry=$1 out
  case $entry in
    probe:*)
      out=$(PROBE=${entry#probe:} CUDA_INJECTION64_PATH=$libdir/libcupti_probe.so \
        "${pin[@]}" "$app" --launches "$launches" --ab cupti_probe_toggle 2>&1) ;;
    gpuperf:*)
      local mode=${entry#gpuperf:} envs opts=""
      envs=${mode#*=}
      if [[ $envs == *" -- "* ]]; then opts=${envs#* -- }; envs=${envs%% -- *}; fi
      # shellcheck disable=SC2086  # env assignments and options are lists
      out=$(env $envs "${pin[@]}" "$libdir/gpuperf" record -q -o "$work/trace" --force \
        --no-symbolize $opts -- "$app" --launches "$launches" --ab gpuperf_bench_toggle 2>&1)
      # What gpuperf's own callback code took, timed inside the process.
      "$libdir/gpuperf" report "$work/trace" 2>/dev/null | grep -m1 'gpuperf callbacks:' |
        sed "s|^ *|$entry: |" >> "$work/callbacks" ;;
  esac
  grep -m1 '^gpuperf-example:' <<< "$out" || { echo "failed: $entry: $(tail -2 <<< "$out" | tr '\n' ' ')" >&2; echo "failed"; }
}

"$app" --launches 1000 > /dev/null 2>&1  # warm-up
for ((r = 0; r < rounds; r++)); do
  for i in "${!names[@]}"; do run_one "${names[$i]}" >> "$work/$i"; done
done

median() { grep -o " $1=[-0-9.e]*" "$2" | cut -d= -f2 | sort -g |
  awk '{v[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
printf '%-64s %8s %8s %9s  %s\n' "mode (µs per launch, median of $rounds runs)" on off added "added, every run"
for i in "${!names[@]}"; do
  printf '%-64s %8.3f %8.3f %+9.3f  %s\n' "${names[$i]}" "$(median ab_on_us "$work/$i")" \
    "$(median ab_off_us "$work/$i")" "$(median ab_added_us "$work/$i")" \
    "$(grep -o ' ab_added_us=[-0-9.e]*' "$work/$i" | cut -d= -f2 | xargs printf '%+.3f ')"
done
[[ -f $work/callbacks ]] && { echo; sort -u "$work/callbacks"; }
