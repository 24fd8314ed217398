#!/usr/bin/env bash
# gpuperf attach's detach while the program's threads are inside CUDA calls (docs/attach.md,
# "Detaching"): four threads launch and synchronize without a pause, and each
# synchronization's exit callback asks CUPTI for its stream (slowly here:
# FAKE_CUPTI_STREAM_ID_DELAY_US), so a callback of the window is running whenever it ends.
# CUPTI must be finalized at the exit of one of the program's CUDA calls (a callback of ours
# there), and only once our callbacks on other threads can no longer use CUPTI (the fake
# counts cuptiFinalize calls made elsewhere, and CUPTI calls of a callback that a finalize
# overtook: real CUPTI frees what such a call reads), at every window of four; the program goes on and ends with its own output and status.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/attach_lib.sh"
use_attach_app
# Half a second in each: longer than the grace the window gives the last work before it
# detaches (300 ms), so a callback that began just before the window's end still runs then.
app_env=(FAKE_CUPTI_STREAM_ID_DELAY_US=500000)

start_app syncs 3 syncs:4 3
pid=$app_pid
touch "$dir/syncs.go/go-1"
# What the process holds open after a window: the same after the second as after the fourth
# (the library keeps what it needs across windows, nothing more each time).
open_files() { find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l; }
for window in 1 2 3 4; do
  attach_start "$dir/w$window" "$pid"
  attach_end
  [[ $attach_rc -eq 0 ]] || fail "window $window: attach exited $attach_rc: $(tail -3 "$dir/w$window.log")"
  fds[window]=$(open_files)
done
[[ ${fds[4]} -eq ${fds[2]} ]] ||
  fail "the process holds ${fds[2]} descriptors after window 2 and ${fds[4]} after window 4: $(ls -l "/proc/$pid/fd")"
touch "$dir/syncs.go/stop-2"
wait_file "$dir/syncs.go/done-2"
line=$(cupti_line syncs 2)
[[ $(field finalized "$line") -eq 4 ]] || fail "CUPTI finalized $(field finalized "$line") times, want 4 (one a window): $line"
# CUPTI's header: safe from the exit of a runtime or driver call, elsewhere only once the client
# has synchronized every thread's CUDA work, which an attached profiler cannot.
[[ $(field finalize_off_api_exit "$line") -eq 0 ]] ||
  fail "CUPTI was finalized outside a callback at an API exit, $(field finalize_off_api_exit "$line") times: $line"
# A callback switched off by id before a finalize crashes real CUPTI 13.0 in a PyTorch process
# (tests/gpu/cupti_cycle.c): a window's callbacks go quiet instead.
[[ $(field finalize_after_callback_off "$line") -eq 0 ]] ||
  fail "CUPTI was finalized after API callbacks were switched off by id, $(field finalize_after_callback_off "$line") times: $line"
[[ $(field calls_across_finalize "$line") -eq 0 ]] ||
  fail "a callback of the window used CUPTI after it was finalized under it, $(field calls_across_finalize "$line") times: $line"
[[ $(field subscribed "$line") -eq 0 && $(field kinds_enabled "$line") -eq 0 ]] || fail "CUPTI after the windows: $line"
finish_app syncs "$pid" 3
[[ $app_rc -eq 5 ]] || fail "the app exited $app_rc, want 5: $(tail -3 "$dir/syncs.err")"
[[ ! -s $dir/syncs.err ]] || fail "the app wrote to its stderr: $(head -3 "$dir/syncs.err")"

# CUPTI refusing the finalize (FAKE_CUPTI_FAIL): our subscriber is given up instead, so the
# next window subscribes again, and the process is left with no subscriber of ours.
app_env=(FAKE_CUPTI_FAIL=cuptiFinalize=999)
start_app refused 3 syncs:2 3
pid=$app_pid
touch "$dir/refused.go/go-1"
for window in 1 2; do
  attach_start "$dir/r$window" "$pid"
  attach_end
  [[ $attach_rc -eq 0 ]] || fail "refused finalize, window $window: attach exited $attach_rc: $(tail -3 "$dir/r$window.log")"
done
grep -q "CUPTI refused the finalize" "$dir/r1.log" || fail "the refused finalize is not said: $(cat "$dir/r1.log")"
touch "$dir/refused.go/stop-2"
wait_file "$dir/refused.go/done-2"
line=$(cupti_line refused 2)
[[ $(field subscribed "$line") -eq 0 && $(field finalized "$line") -eq 0 ]] ||
  fail "after refused finalizes CUPTI still has gpuperf's subscriber: $line"
finish_app refused "$pid" 3
[[ $app_rc -eq 5 ]] || fail "refused finalize: the app exited $app_rc, want 5"

finish
