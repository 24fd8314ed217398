#!/usr/bin/env bash
# gpuperf attach never hurts the process it attaches to, whatever happens to it or to gpuperf
# at any of its steps (src/attach/attach_steps.h):
#   - gpuperf killed with SIGKILL at each step, one after another on the same process: the
#     process goes on, phase after phase; where the loader stub already ran, the window
#     started by itself ends by itself (gpuperf is gone); a last, whole window holds exactly its
#     phase; at the end the process's output and exit status are those of a run nobody
#     attached to;
#   - the process killed at each step: gpuperf says so in one line and ends, never hangs.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/attach_lib.sh"
use_attach_app
app_env=()
steps=13           # kChecked .. kDone
first_on_its_own=6 # kRedirected: from here the stub finishes without gpuperf
phases=()
for ((k = 0; k < steps + 2; k++)); do phases+=(3); done

# ---- the run nobody attaches to ----
mkdir -p "$dir/plain.go"
for ((k = 1; k <= ${#phases[@]}; k++)); do touch "$dir/plain.go/go-$k"; done
env FAKE_APP_LIBCUDA="$libcuda" FAKE_APP_GO_DIR="$dir/plain.go" "$app" attach_target "${phases[@]}" \
  > "$dir/plain.out" 2> "$dir/plain.err"
[[ $? -eq 5 ]] || fail "the plain run did not exit 5"

# ---- gpuperf killed at each step ----
start_app killed "${phases[@]}"
pid=$app_pid
for ((step = 1; step <= steps; step++)); do
  out=$dir/kill$step
  GPUPERF_ATTACH_STOP_AT=$step "$GPUPERF" attach "$pid" -o "$out" --inject-lib "$lib" > "$out.log" 2>&1 &
  job=$!
  if ((step >= 12)); then  # kStopAsked, kDone: after Ctrl-C
    wait_line "$out.log" "recording" && kill -INT "$job"
  fi
  wait "$job" 2>/dev/null
  rc=$?
  [[ $rc -eq 137 ]] || fail "step $step: gpuperf exited $rc, not killed at the step: $(tail -2 "$out.log")"
  if ((step >= first_on_its_own)); then
    # The window the stub started sees gpuperf gone and ends, its trace closed.
    wait_line "$out/.gpuperf-attach-$pid.state" "state=done"
    grep -q "closed=1" "$out/.gpuperf-attach-$pid.state" ||
      fail "step $step: the window's trace was not closed: $(cat "$out/.gpuperf-attach-$pid.state")"
  else
    [[ ! -e $out/.gpuperf-attach-$pid.state ]] || fail "step $step: a window started before the stub ran"
  fi
  kill -0 "$pid" 2>/dev/null || { fail "step $step: the process died"; break; }
  go killed "$step"
done
# A whole window after all that: exactly its phase.
last=$((steps + 1))
attach_start "$dir/whole" "$pid"
go killed "$last"
attach_end
[[ $attach_rc -eq 0 ]] || fail "the last attach exited $attach_rc: $(tail -3 "$dir/whole.log")"
[[ $(kernel_names "$dir/whole") == "3 _Z7phase$((last + 1))v " ]] ||
  fail "the last window: '$(kernel_names "$dir/whole")', want 3 of phase $((last + 1))"
finish_app killed "$pid" ${#phases[@]}
[[ $app_rc -eq 5 ]] || fail "the process exited $app_rc, want 5: $(tail -3 "$dir/killed.err")"
[[ "$(app_lines killed)" == "$(app_lines plain)" ]] ||
  fail "the process's output changed: $(diff <(app_lines plain) <(app_lines killed))"
[[ ! -s $dir/killed.err ]] || fail "the process wrote to its stderr: $(head -3 "$dir/killed.err")"

# ---- the process killed at each step ----
app_orphan=1
for ((step = 1; step <= steps; step++)); do
  start_app dies$step 3 3
  pid=$app_pid
  out=$dir/dies$step
  GPUPERF_ATTACH_TARGET_EXIT_AT=$step "$GPUPERF" attach "$pid" -o "$out" --inject-lib "$lib" \
    > "$out.log" 2>&1 &
  job=$!
  if ((step >= 12)); then
    wait_line "$out.log" "recording" && kill -INT "$job"
  fi
  # gpuperf must end by itself: a generous bound only tells a hang from a slow machine.
  for ((i = 0; i < 6000; i++)); do kill -0 "$job" 2>/dev/null || break; sleep 0.02; done
  if kill -0 "$job" 2>/dev/null; then
    fail "step $step: gpuperf still runs 2 minutes after the process died: $(tail -2 "$out.log")"
    kill -KILL "$job"
  fi
  wait "$job"
  rc=$?
  ended="process $pid( \(fake_cuda_app\))? (exited|ended) during the (attach|window)"
  if ((step <= 8)); then  # up to kInCall: the attach itself fails
    [[ $rc -eq 1 ]] || fail "step $step: gpuperf exited $rc, want 1: $(cat "$out.log")"
    [[ $(wc -l < "$out.log") -eq 1 ]] && grep -qE "^gpuperf: error: $ended" "$out.log" ||
      fail "step $step: not one line saying the process exited: $(cat "$out.log")"
  elif ((step <= 10)); then
    # kMarker, kReleased: the library's start function has returned, so the window's thread
    # may have begun recording in the microseconds before the kill landed. Either the
    # attach fails with its one line, or the window ends with the process.
    if [[ $rc -eq 1 ]]; then
      [[ $(wc -l < "$out.log") -eq 1 ]] && grep -qE "^gpuperf: error: $ended" "$out.log" ||
        fail "step $step: not one line saying the process exited: $(cat "$out.log")"
    else
      [[ $rc -eq 0 ]] && grep -qE "^gpuperf: $ended" "$out.log" ||
        fail "step $step: gpuperf exited $rc without saying the process ended: $(cat "$out.log")"
    fi
  elif ((step == 11)); then  # kStarted: the window was recording
    [[ $rc -eq 0 ]] || fail "step $step: gpuperf exited $rc, want 0 (a trace up to the end)"
    grep -qE "^gpuperf: $ended" "$out.log" || fail "step $step: gpuperf did not say the process ended: $(cat "$out.log")"
  else  # kStopAsked, kDone: the window was ending or had ended
    [[ $rc -eq 0 ]] || fail "step $step: gpuperf exited $rc, want 0: $(cat "$out.log")"
  fi
done

finish
