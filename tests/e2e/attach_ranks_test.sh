#!/usr/bin/env bash
# gpuperf attach to several processes at once, as the ranks of a job (docs/attach.md):
#   - attach PID PID: one trace per process, each exactly the phase its window held;
#   - attach --all: every process of this user that has loaded libcuda, and no other (a
#     process without libcuda is not looked at);
#   - --at: the window opens at a wall-clock time; stopped before it, nothing is recorded
#     and CUPTI is never subscribed; opened at the time, it records as a plain window does;
#   - record's options in a window: --flight (dump-now during the window, one dump at its end,
#     each with the window's work), --no-stacks,
#     --activities.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/attach_lib.sh"
use_attach_app
app_env=()

# attach_many OUT OPTION... : gpuperf attach in the background with the given options,
# until it records (every process it attached to said so).
attach_many() {
  local out=$1
  shift
  "$GPUPERF" attach -o "$out" --inject-lib "$lib" "$@" > "$out.log" 2>&1 &
  attach_job=$!
}

# ---- two PIDs ----
start_app r0 4 10 4
r0=$app_pid
start_app r1 4 20 4
r1=$app_pid
attach_many "$dir/pair" "$r0" "$r1"
wait_line "$dir/pair.log" "attached to process $r0 "
wait_line "$dir/pair.log" "attached to process $r1 "
go r0 1
go r1 1
attach_end
[[ $attach_rc -eq 0 ]] || fail "attach PID PID exited $attach_rc: $(cat "$dir/pair.log")"
[[ $(kernel_names "$dir/pair/fake_cuda_app.$r0.gpt") == "10 _Z6phase2v " &&
   $(kernel_names "$dir/pair/fake_cuda_app.$r1.gpt") == "20 _Z6phase2v " ]] ||
  fail "attach PID PID: $(kernel_names "$dir/pair/fake_cuda_app.$r0.gpt") / $(kernel_names "$dir/pair/fake_cuda_app.$r1.gpt")"
grep -q "recorded 2 processes" "$dir/pair.log" || fail "attach PID PID's summary: $(cat "$dir/pair.log")"

# ---- --all: the CUDA processes of this user, none other ----
app_env=(FAKE_APP_LIBCUDA=)
start_app nocuda 3 3
nocuda=$app_pid
app_env=()
# Only where no other process here has loaded libcuda (a GPU machine may run some).
others=$(grep -l 'libcuda\.so' /proc/[0-9]*/maps 2>/dev/null | cut -d/ -f3 | grep -vxE "$r0|$r1" || true)
if [[ -z $others ]]; then
  attach_many "$dir/all" --all
  wait_line "$dir/all.log" "attached to process $r0 "
  wait_line "$dir/all.log" "attached to process $r1 "
  go r0 2
  go r1 2
  attach_end
  [[ $attach_rc -eq 0 ]] || fail "--all exited $attach_rc: $(cat "$dir/all.log")"
  [[ $(ls "$dir/all" | grep -c '\.gpt$') -eq 2 ]] || fail "--all: traces $(ls "$dir/all")"
  [[ $(kernel_names "$dir/all/fake_cuda_app.$r0.gpt") == "4 _Z6phase3v " &&
     $(kernel_names "$dir/all/fake_cuda_app.$r1.gpt") == "4 _Z6phase3v " ]] || fail "--all: the windows' kernels"
  grep -qE "process $nocuda( |:)" "$dir/all.log" && fail "--all looked at a process without libcuda: $(cat "$dir/all.log")"
else
  echo "note: other processes here have loaded libcuda ($others): --all is not run"
  go r0 2
  go r1 2
fi
finish_app r0 "$r0" 3
finish_app r1 "$r1" 3
finish_app nocuda "$nocuda" 2
[[ $(cupti_line nocuda 1) == *"callbacks=0 records=0 subscribed=0"* ]] || fail "--all touched the process without libcuda"

# ---- --at, stopped before the window opens ----
start_app early 5 6 7
pid=$app_pid
at=@$(($(date +%s) + 3600))
attach_many "$dir/early" "$pid" --at "$at"
wait_line "$dir/early.log" "its window opens at"
go early 1
kill -INT "$attach_job"
wait "$attach_job"
rc=$?
[[ $rc -eq 1 ]] || fail "--at stopped before the window: exit $rc, want 1 (nothing recorded)"
grep -q "the window never began" "$dir/early.log" || fail "--at stopped early: $(cat "$dir/early.log")"
[[ -z $(ls "$dir/early" | grep '\.gpt$') ]] || fail "--at stopped early left a trace: $(ls "$dir/early")"
go early 2
finish_app early "$pid" 3
[[ $app_rc -eq 5 ]] || fail "early: the app exited $app_rc"
for k in 1 2 3; do
  [[ $(cupti_line early "$k") == *"callbacks=0 records=0 subscribed=0 kinds_enabled=0 finalized=0 "* ]] ||
    fail "early: CUPTI was subscribed before the window: $(cupti_line early "$k")"
done

# ---- --at, reached ----
start_app timed 5 6 7
pid=$app_pid
attach_many "$dir/timed" "$pid" --at +1s
wait_line "$dir/timed.log" "its window opens at"
wait_line "$dir/timed.log" "process $pid (fake_cuda_app): recording"
go timed 1
attach_end
[[ $attach_rc -eq 0 && $(kernel_names "$dir/timed") == "6 _Z6phase2v " ]] ||
  fail "--at reached: exit $attach_rc, kernels '$(kernel_names "$dir/timed")', want 6 of phase 2"
finish_app timed "$pid" 3
[[ $app_rc -eq 5 ]] || fail "timed: the app exited $app_rc"

# ---- record's options in a window: --flight, --no-stacks, --activities ----
start_app options 3 5 6 7 3
pid=$app_pid
"$GPUPERF" dump-now "$pid" > "$dir/no_window.out" 2> "$dir/no_window.err"
[[ $? -ne 0 && $(wc -l < "$dir/no_window.err") -eq 1 ]] && grep -q "gpuperf attach --flight" "$dir/no_window.err" ||
  fail "dump-now with no window open: $(cat "$dir/no_window.err")"
attach_start "$dir/flight" "$pid" --flight 30s
go options 1
# dump-now finds an attach window through the window's log file, which the process holds open.
"$GPUPERF" dump-now "$pid" --no-symbolize > "$dir/dump_now.out" 2> "$dir/dump_now.err" ||
  fail "dump-now during an attach --flight window exited $?: $(cat "$dir/dump_now.err")"
mkdir -p "$dir/dumped"
cp "$dir"/flight/*."$pid".flight-1.gpt "$dir/dumped/" 2>/dev/null
[[ $(kernel_names "$dir/dumped") == "5 _Z6phase2v " ]] ||
  fail "dump-now's dump holds '$(kernel_names "$dir/dumped")', want 5 of phase 2: $(cat "$dir/dump_now.out" "$dir/dump_now.err")"
attach_end
dumps=$(ls "$dir/flight" | grep -c "\.$pid\.flight-[0-9]*\.gpt$")
[[ $attach_rc -eq 0 && $dumps -eq 2 ]] || fail "--flight: exit $attach_rc, $dumps dumps (dump-now's and the window's end): $(ls "$dir/flight")"
rm "$dir"/flight/*."$pid".flight-1.gpt
[[ $(kernel_names "$dir/flight") == "5 _Z6phase2v " ]] || fail "--flight: the dump holds '$(kernel_names "$dir/flight")'"
attach_start "$dir/nostacks" "$pid" --no-stacks
go options 2
attach_end
[[ $(kernel_names "$dir/nostacks") == "6 _Z6phase3v " && $(count "$dir/nostacks" stack) -eq 0 &&
   $(count "$dir/nostacks" api) -gt 0 ]] ||
  fail "--no-stacks: kernels '$(kernel_names "$dir/nostacks")', $(count "$dir/nostacks" stack) stacks"
attach_start "$dir/kernels" "$pid" --activities kernel
go options 3
attach_end
[[ $(kernel_names "$dir/kernels") == "7 _Z6phase4v " && $(count "$dir/kernels" memcpy) -eq 0 ]] ||
  fail "--activities kernel: kernels '$(kernel_names "$dir/kernels")', $(count "$dir/kernels" memcpy) copies"
finish_app options "$pid" 5
[[ $app_rc -eq 5 ]] || fail "options: the app exited $app_rc"

finish
