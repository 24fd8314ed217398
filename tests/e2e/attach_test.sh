#!/usr/bin/env bash
# gpuperf attach on the fake CUDA app, started without gpuperf (docs/attach.md):
#   - two windows, each holding exactly the work of the phase inside it (kernels, copies, sets,
#     API calls, every launch with its stack, symbolized), nothing of the phases before, between
#     or after; CUPTI subscribed only during a window and finalized after each;
#   - the second attach reuses the library the first one loaded (even given another path);
#   - the app's own output and exit status are those of a run nobody attached to, and its
#     main thread's signal mask is as it was;
#   - 16 threads launching at full rate while the library is loaded and CUPTI subscribed:
#     every kernel recorded with its stack, nothing dropped;
#   - a program whose only thread computes (no thread waits anywhere): stopped where it runs;
#   - one whose only thread computes inside libcuda but for 0.1% of its time: attached three
#     times, each time stopped outside CUDA;
#   - a program blocked in read() of a FIFO: the read goes on as if nothing happened.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/attach_lib.sh"
use_attach_app
app_env=()

phases=(10 20 30 40 50)

# ---- the run nobody attaches to: what the app prints and returns by itself ----
mkdir -p "$dir/plain.go"
for k in 1 2 3 4 5; do touch "$dir/plain.go/go-$k"; done
env FAKE_APP_LIBCUDA="$libcuda" FAKE_APP_GO_DIR="$dir/plain.go" "$app" attach_target "${phases[@]}" \
  > "$dir/plain.out" 2> "$dir/plain.err"
plain_rc=$?
[[ $plain_rc -eq 5 ]] || fail "the plain run exited $plain_rc, want 5"

# ---- attached twice: phase 2 in the first window, phase 4 in the second ----
start_app two "${phases[@]}"
pid=$app_pid
mask_before=$(grep '^SigBlk' "/proc/$pid/task/$pid/status")
attach_start "$dir/w1" "$pid"
go two 1
attach_end
[[ $attach_rc -eq 0 ]] || fail "the first attach exited $attach_rc: $(tail -3 "$dir/w1.log")"
go two 2
# A copy of the library at another path: the second attach must use the one loaded already.
cp "$lib" "$dir/copy_of_inject.so"
lib_was=$lib
lib=$dir/copy_of_inject.so
attach_start "$dir/w2" "$pid"
lib=$lib_was
go two 3
attach_end
[[ $attach_rc -eq 0 ]] || fail "the second attach exited $attach_rc: $(tail -3 "$dir/w2.log")"
go two 4
mask_after=$(grep '^SigBlk' "/proc/$pid/task/$pid/status")
[[ $mask_after == "$mask_before" ]] || fail "the main thread's signal mask changed: '$mask_before' -> '$mask_after'"
mapped=$(grep -o '/[^ ]*libgpuperf_inject[^ ]*' "/proc/$pid/maps" | sort -u)
[[ $mapped == "$lib" ]] || fail "the library mapped: '$mapped', want only $lib (loaded once, then reused)"
finish_app two "$pid" 5
[[ $app_rc -eq 5 ]] || fail "the attached app exited $app_rc, want 5: $(tail -3 "$dir/two.err")"
[[ "$(app_lines two)" == "$(app_lines plain)" ]] ||
  fail "the app's output changed under attach: $(diff <(app_lines plain) <(app_lines two))"
[[ ! -s $dir/two.err ]] || fail "the app wrote to its stderr: $(head -3 "$dir/two.err")"

# Each window: exactly its phase.
check_window() {
  local trace=$1 phase=$2 name
  name="_Z6phase${phase}v"
  local line runtime
  line=$(phase_line two "$phase")
  runtime=$(field runtime_api "$line")
  [[ $(kernel_names "$trace") == "$(field kernels "$line") $name " ]] ||
    fail "$trace: kernels '$(kernel_names "$trace")', want $(field kernels "$line") $name"
  [[ $(count "$trace" memcpy) -eq 1 && $(count "$trace" memset) -eq 1 ]] ||
    fail "$trace: $(count "$trace" memcpy) copies and $(count "$trace" memset) sets, want 1 and 1"
  [[ $(count "$trace" api) -eq $runtime ]] ||
    fail "$trace: $(count "$trace" api) API calls, want the phase's $runtime outermost calls"
  # CUDA started long before the window: its device and context are asked of CUPTI at the
  # window's start, else the trace would name no GPU.
  [[ $(count "$trace" device) -eq 1 && $(count "$trace" context) -eq 1 ]] ||
    fail "$trace: $(count "$trace" device) devices and $(count "$trace" context) contexts, want 1 and 1"
  [[ $(count "$trace" launch_link) -gt 0 && $(unlinked "$trace") -eq 0 ]] ||
    fail "$trace: $(unlinked "$trace") of $(count "$trace" launch_link) launch links without a stack"
  "$GPUPERF" flamegraph "$trace" --format folded > "$trace.folded" 2> "$trace.folded.err"
  grep -q "AttachTarget;.*LaunchKernel;.*cudaLaunchKernel;\[GPU0\] phase$phase " "$trace.folded" ||
    fail "$trace: the kernels are not under the app's symbolized launch stack: $(head -2 "$trace.folded")"
  [[ -z $(ls -A "$trace" | grep '^\.gpuperf-attach') ]] || fail "$trace: attach's state files left: $(ls -A "$trace")"
}
check_window "$dir/w1" 2
check_window "$dir/w2" 4
grep -q "lost      nothing" "$dir/w1.log" || fail "the first window's summary: $(cat "$dir/w1.log")"

# What CUPTI saw: nothing before the first window, in between or after; a subscriber and
# activity kinds only while a window was open; finalized after each. The app is idle when a
# window ends, so the first CUDA call after it finalizes CUPTI from its exit callback
# (cupti/detach.h): that one call's enter and exit, in the runtime's domain and the driver's,
# are the only callbacks outside a window.
line=$(cupti_line two 1)
[[ $(field callbacks "$line") -eq 0 && $(field records "$line") -eq 0 ]] ||
  fail "phase 1, before the first window, reached CUPTI: $line"
for k in 3 5; do
  line=$(cupti_line two "$k")
  [[ $(field callbacks "$line") -le 4 && $(field records "$line") -eq 0 &&
     $(field finalize_off_api_exit "$line") -eq 0 ]] ||
    fail "phase $k, outside the windows, reached CUPTI beyond the call that finalized it: $line"
done
grep -q "CUPTI is finalized at its next one" "$dir/w1.log" ||
  fail "the first window's end does not say CUPTI waits for the app's next CUDA call: $(cat "$dir/w1.log")"
for k in 2 4; do
  line=$(cupti_line two "$k")
  [[ $(field callbacks "$line") -gt 0 && $(field records "$line") -eq $((${phases[k - 1]} + 2)) ]] ||
    fail "phase $k, inside a window: $line (want ${phases[k - 1]} kernels + a copy + a set)"
done
for k in 3 5; do
  line=$(cupti_line two "$k")
  [[ $(field subscribed "$line") -eq 0 && $(field kinds_enabled "$line") -eq 0 &&
     $(field finalized "$line") -eq $(((k - 1) / 2)) ]] ||
    fail "after window $(((k - 1) / 2)) CUPTI is not detached: $line"
done

# ---- 16 threads launching at full rate during the whole attach ----
start_app busy 5 run:16 5
pid=$app_pid
# Phase 2 runs until stop-2 exists: the library is loaded, and the window opens and closes,
# while 16 threads launch. The window ends once its trace holds records (its file grows at
# each 100 ms flush).
touch "$dir/busy.go/go-1"
attach_start "$dir/busy" "$pid" --flush-period 100ms
wait_until bash -c "[[ \$(cat '$dir'/busy/*.gpt 2>/dev/null | wc -c) -ge 100000 ]]" ||
  fail "the window in the busy app never held records"
attach_end
[[ $attach_rc -eq 0 ]] || fail "attach to the busy app exited $attach_rc: $(tail -3 "$dir/busy.log")"
touch "$dir/busy.go/stop-2"
wait_file "$dir/busy.go/done-2"
go busy 2
finish_app busy "$pid" 3
[[ $app_rc -eq 5 ]] || fail "the busy app exited $app_rc, want 5: $(tail -3 "$dir/busy.err")"
"$GPUPERF" dump "$dir/busy" > "$dir/busy.dump"
kernels=$(grep -c '^kernel ' "$dir/busy.dump")
unlinked_busy=$(grep '^launch_link ' "$dir/busy.dump" | grep -c ' stack_id=0 ')
# Every kernel joined to the launch that made it, with its stack: a call that was running
# when the window opened is left out whole (its stack was never taken).
[[ $kernels -gt 0 && $(unjoined "$dir/busy.dump") -eq 0 && $unlinked_busy -eq 0 ]] ||
  fail "busy: $kernels kernels, $(unjoined "$dir/busy.dump") without their launch's stack, $unlinked_busy links without a stack"
launching=$(sed -n 's/^launch_link pid=[0-9]* tid=\([0-9]*\) .*/\1/p' "$dir/busy.dump" | sort -u | wc -l)
[[ $launching -eq 16 ]] || fail "busy: launches from $launching threads in the trace, want 16"
grep -q "lost      nothing" "$dir/busy.log" || fail "busy: something was lost: $(grep -A2 lost "$dir/busy.log")"
line=$(cupti_line busy 2)
[[ $(field subscribed "$line") -eq 0 && $(field kinds_enabled "$line") -eq 0 ]] || fail "busy: CUPTI after the window: $line"
line=$(cupti_line busy 3)
[[ $(field callbacks "$line") -eq 0 && $(field records "$line") -eq 0 ]] || fail "busy: CUPTI after the window: $line"

# ---- a program whose only thread computes: stopped where it runs ----
start_app spin 3 spin 4 3
pid=$app_pid
touch "$dir/spin.go/go-1"
wait_until grep -q '^running' "/proc/$pid/syscall" || fail "the spinning app never ran"
attach_start "$dir/spin" "$pid" -v
grep -q "through thread $pid (running, stopped where it was)" "$dir/spin.log" ||
  fail "spin: not loaded through the running thread: $(head -2 "$dir/spin.log")"
touch "$dir/spin.go/stop-2"
wait_file "$dir/spin.go/done-2"
go spin 2
attach_end
[[ $attach_rc -eq 0 && $(kernel_names "$dir/spin") == "4 _Z6phase3v " ]] ||
  fail "spin: exit $attach_rc, kernels '$(kernel_names "$dir/spin")', want 4 of phase 3"
finish_app spin "$pid" 4
[[ $app_rc -eq 5 ]] || fail "the spinning app exited $app_rc, want 5: $(tail -3 "$dir/spin.err")"

# ---- a program whose only thread computes inside CUDA, attached three times ----
# As a loop of launches and synchronizations (the static-cudart program of the GPU check): it
# leaves libcuda for 0.1% of its time. Each attach, the later ones reusing the library, must
# catch it outside CUDA (the thread held and looked at until then) within its 5 s. One look
# per scan of /proc, as before, missed it in most attaches.
start_app cudaspin 3 cudaspin 3
pid=$app_pid
touch "$dir/cudaspin.go/go-1"
wait_until grep -q '^running' "/proc/$pid/syscall" || fail "the cudaspin app never ran"
for window in 1 2 3; do
  attach_start "$dir/cudaspin$window" "$pid" -v
  grep -q "through thread $pid (running, stopped where it was)" "$dir/cudaspin$window.log" ||
    fail "cudaspin, attach $window: not loaded through the running thread: $(head -3 "$dir/cudaspin$window.log")"
  attach_end
  [[ $attach_rc -eq 0 ]] || fail "cudaspin, attach $window exited $attach_rc: $(tail -3 "$dir/cudaspin$window.log")"
  [[ $window == 1 ]] || grep -q "reused " "$dir/cudaspin$window.log" ||
    fail "cudaspin, attach $window did not reuse the library: $(head -3 "$dir/cudaspin$window.log")"
done
touch "$dir/cudaspin.go/stop-2"
wait_file "$dir/cudaspin.go/done-2"
finish_app cudaspin "$pid" 3
[[ $app_rc -eq 5 ]] || fail "the cudaspin app exited $app_rc, want 5: $(tail -3 "$dir/cudaspin.err")"
[[ "$(app_lines cudaspin | grep -c 'phase [13] done kernels=3 ')" -eq 2 ]] ||
  fail "the cudaspin app's phases: $(app_lines cudaspin)"

# ---- a program blocked in read() of a FIFO ----
mkfifo "$dir/go.fifo"
app_env=(FAKE_APP_GO_FIFO="$dir/go.fifo")
start_app fifo 10 20 30
pid=$app_pid
wait_until grep -q '^0 ' "/proc/$pid/syscall" || fail "the fifo app never blocked in read()"
attach_start "$dir/fifo" "$pid"
[[ $(cut -d' ' -f1 "/proc/$pid/syscall") == 0 ]] || fail "the fifo app is no longer in read(): $(cat "/proc/$pid/syscall")"
echo -n x > "$dir/go.fifo"
wait_file "$dir/fifo.go/done-2"
attach_end
echo -n x > "$dir/go.fifo"
echo -n x > "$dir/go.fifo"
wait "$pid"
app_rc=$?
[[ $app_rc -eq 5 ]] || fail "the fifo app exited $app_rc, want 5: $(grep 'go FIFO' "$dir/fifo.out")"
[[ $(grep -c 'go (one byte read)' "$dir/fifo.out") -eq 3 ]] || fail "the fifo app's reads: $(grep 'phase' "$dir/fifo.out")"
[[ $(kernel_names "$dir/fifo") == "20 _Z6phase2v " ]] || fail "fifo: kernels '$(kernel_names "$dir/fifo")', want 20 of phase 2"

finish
