#!/usr/bin/env bash
# A profiler inside the recorded program (torch.profiler's Kineto) refused CUPTI because gpuperf
# holds it: gpuperf says so once, through libgpuperf_preload.so, which `record` adds to the
# program's LD_PRELOAD (docs/recording.md, "Other profilers"). Driven with the fake CUDA app's
# Kineto-like client (tests/fakes/fake_app.cc, scenario kineto).
source "$(dirname "$0")/lib.sh"
bin=$GPUPERF_BINARY_DIR
lib=$bin/src/inject/libgpuperf_inject.so
preload=$bin/src/inject/libgpuperf_preload.so
app=$bin/tests/fakes/fake_cuda_app
[[ -x $app && -f $lib && -f $preload ]] || { echo "skip: no injection or preload library or fake app"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
line="was refused CUPTI's callbacks, which gpuperf holds"

# rec NAME [RECORD_OPTIONS...] -- ARGS...: records the fake app into $dir/NAME, output in NAME.log.
rec() {
  local name=$1; shift
  local options=()
  while [[ $1 != "--" ]]; do options+=("$1"); shift; done
  shift
  "$GPUPERF" record -o "$dir/$name" --force --inject-lib "$lib" "${options[@]}" -- "$@" \
    > "$dir/$name.log" 2>&1 || fail "$name: record exited $? ($(tail -3 "$dir/$name.log"))"
}
said() { grep -c -- "$line" "$dir/$1.log"; }
summary_kernels() { sed -n 's/^  kernels *\([0-9,]*\).*/\1/p' "$dir/$1.log" | tr -d ,; }
app_kernels() { sed -n 's/^fake-app: pid=.* kernels=\([0-9]*\).*/\1/p' "$dir/$1.log"; }

# The library is a guest in every process record starts: it needs libc alone.
needed=$(readelf -d "$preload" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
[[ $needed == "libc.so.6 " ]] || fail "the preload library needs more than libc: $needed"

# Two profiling sessions, both refused while gpuperf holds CUPTI: one line, two counted, every
# kernel still recorded, the summary and the report say it.
rec refused -- "$app" kineto 400 2
[[ $(grep -c "session=.*subscribe=CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" "$dir/refused.log") -eq 2 ]] \
  || fail "refused: the Kineto-like sessions were not both refused: $(grep kineto "$dir/refused.log")"
[[ $(said refused) -eq 1 ]] || fail "refused: want gpuperf's line once, got $(said refused)"
grep -q "^gpuperf\[[0-9]*\]: another CUPTI client (torch.profiler? Kineto?) $line" "$dir/refused.log" \
  || fail "refused: the line lacks gpuperf's prefix: $(grep -- "$line" "$dir/refused.log")"
[[ $(stat_value "$dir/refused" cupti_clients_refused) -eq 2 ]] \
  || fail "refused: cupti_clients_refused is '$(stat_value "$dir/refused" cupti_clients_refused)', want 2"
[[ $(app_kernels refused) -eq 400 && $(summary_kernels refused) -eq 400 ]] \
  || fail "refused: recorded $(summary_kernels refused) of $(app_kernels refused) kernels"
grep -q "^  warning   2 CUPTI clients in the program (torch.profiler?) refused CUPTI" "$dir/refused.log" \
  || fail "refused: the summary does not say it: $(grep -v '^fake' "$dir/refused.log")"
grep -q "lost      nothing" "$dir/refused.log" || fail "refused: gpuperf's own trace should lose nothing"
"$GPUPERF" report "$dir/refused" > "$dir/refused.report" 2>&1
grep -q "WARN .*\[cupti_clients_refused\]" "$dir/refused.report" \
  || fail "refused: report has no warning row: $(grep -A4 Warnings "$dir/refused.report")"

# --quiet: counted, not said.
rec quiet --quiet -- "$app" kineto 400 2
[[ $(said quiet) -eq 0 ]] || fail "quiet: the line was printed under --quiet"
[[ $(stat_value "$dir/quiet" cupti_clients_refused) -eq 2 ]] || fail "quiet: the refusals were not counted"

# Switched off: no library in the program, no line, no stat, the same kernels.
GPUPERF_PRELOAD=off rec off -- "$app" kineto 400 2
[[ $(said off) -eq 0 ]] || fail "off: the line came with GPUPERF_PRELOAD=off"
[[ -z $(stat_value "$dir/off" cupti_clients_refused) ]] || fail "off: cupti_clients_refused was counted"
[[ $(summary_kernels off) -eq 400 ]] || fail "off: recorded $(summary_kernels off) of 400 kernels"

# Refusals that are not gpuperf's doing are not claimed. Without stacks and API records gpuperf
# does not subscribe, and the program's own client holds CUPTI when its sessions start.
rec nostacks_held --no-stacks --activities kernel -- "$app" kineto 400 2 1
grep -q "own_client=CUPTI_SUCCESS" "$dir/nostacks_held.log" || fail "nostacks_held: the program's client did not get CUPTI"
[[ $(grep -c "session=.*subscribe=CUPTI_ERROR_MULTIPLE" "$dir/nostacks_held.log") -eq 2 ]] \
  || fail "nostacks_held: the sessions were not refused"
[[ $(said nostacks_held) -eq 0 ]] || fail "nostacks_held: gpuperf claimed a refusal it did not cause"
[[ -z $(stat_value "$dir/nostacks_held" cupti_clients_refused) ]] || fail "nostacks_held: counted"
# Another tool holding CUPTI before gpuperf (the fake's Nsight): gpuperf's own refusal is said
# by the injection library, and the preload claims nothing.
rec nsight_first -- "$app" second_subscriber
grep -q "already in use" "$dir/nsight_first.log" || fail "nsight_first: gpuperf's own refusal not said"
[[ $(said nsight_first) -eq 0 ]] || fail "nsight_first: the preload claimed gpuperf's own refusal"

# The program's LD_PRELOAD is kept, ours goes after it, and a nested record does not add it twice.
cp "$preload" "$dir/libother.so"
LD_PRELOAD=$dir/libother.so "$GPUPERF" record -o "$dir/env" --inject-lib "$lib" -- \
  bash -c 'echo "child LD_PRELOAD=$LD_PRELOAD"' > "$dir/env.log" 2>&1
grep -qxF "child LD_PRELOAD=$dir/libother.so:$(realpath "$preload")" "$dir/env.log" \
  || fail "env: $(grep child "$dir/env.log")"
LD_PRELOAD=$(realpath "$preload") "$GPUPERF" record -o "$dir/env2" --inject-lib "$lib" -- \
  bash -c 'echo "child LD_PRELOAD=$LD_PRELOAD"' > "$dir/env2.log" 2>&1
grep -qxF "child LD_PRELOAD=$(realpath "$preload")" "$dir/env2.log" || fail "env2: $(grep child "$dir/env2.log")"
finish
