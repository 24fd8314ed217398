#!/usr/bin/env bash
# Signals never cut the final flush short, and every signal that ends a program gets one
# (docs/recording.md, "How a run ends"). The fake CUDA app's await_signal scenario launches a
# known number of kernels, says so, and waits to be signalled, as a long job does:
#   - a process group's SIGTERM (`timeout`, `kill -- -PGID` of a setsid'd record) reaches the
#     program through `record` alone, and loses nothing even when two arrive during the flush;
#   - every signal whose default action ends a program, sent with kill or (the faults) raised
#     for real: every kernel and the final flush in the trace, the same cause of death (exit
#     status, core dump), no live page left behind;
#   - a program's own SIGINT/SIGTERM handler sees each signal once, also for Ctrl+C in a real
#     terminal; an ignored SIGPIPE stays ignored; a program's own SIGSEGV handler keeps its
#     faults.
source "$(dirname "$0")/lib.sh"
use_fake_app
export GPUPERF_LIVE_DIR=$dir/live
mkdir -p "$GPUPERF_LIVE_DIR"
trap 'touch "$dir"/*.release 2>/dev/null; wait; rm -rf "$dir"' EXIT

# wait_for FILE: a generous bounded poll for what the app writes once its launches are done.
wait_for() {
  local i
  for ((i = 0; i < 12000; i++)); do [[ -s $1 ]] && return 0; sleep 0.01; done
  fail "gave up waiting for $1: $(tail -3 "${1%.*}.log" 2>/dev/null)"
  return 1
}
log_has() { grep -qF -- "$2" "$dir/$1.log"; }
expect_log() { log_has "$1" "$2" || fail "$1: output lacks '$2': $(grep -v '^fake-cupti' "$dir/$1.log" | tail -6)"; }
summary_kernels() { sed -n 's/^  kernels *\([0-9,]*\).*/\1/p' "$dir/$1.log" | tr -d ,; }
launched() { sed -n 's/^fake-app: pid=.* kernels=\([0-9]*\) .*/\1/p' "$dir/$1.log" | head -1; }
signal_number() { kill -l "$1"; }

# record NAME LAUNCHES HOW [PREFIX...]: records the app in the background, as a script or a
# scheduler would; the final flush has all the work (no periodic flush in 10 minutes; with
# buffer=65536, one CUPTI buffer holds every record, so that flush takes a while, as a busy
# program's does, and a second signal has time to come during it). Signals start at their
# defaults (a script's background job would ignore SIGINT and SIGQUIT).
record() {
  local name=$1 launches=$2 how=$3; shift 3
  rm -f "$dir/$name.ready"
  FAKE_APP_READY=$dir/$name.ready FAKE_APP_RELEASE=$dir/$name.release \
    "$@" env --default-signal "$GPUPERF" record -o "$dir/$name" --flush-period 600000 \
    --buffer-size "${buffer:-2048}" --inject-lib "$lib" -- "$app" await_signal "$launches" "$how" \
    > "$dir/$name.log" 2>&1 &
  record_job=$!
}
app_pid() { cut -d' ' -f1 "$dir/$1.ready"; }
app_group() { cut -d' ' -f2 "$dir/$1.ready"; }

# everything_kept NAME LAUNCHES SIGNAL: every kernel the app launched is in the trace, with the
# final flush ("lost nothing"), the signal is the cause of death, and no live page is left.
everything_kept() {
  local name=$1 launches=$2 signal=$3
  [[ $(launched "$name") == "$launches" ]] || fail "$name: the app launched '$(launched "$name")' kernels"
  [[ $(summary_kernels "$name") == "$launches" ]] ||
    fail "$name: $(summary_kernels "$name") of $launches kernels in the trace"
  expect_log "$name" "lost      nothing"
  grep -qE "was killed by signal $(signal_number "$signal") \(SIG[A-Z0-9]+\) after gpuperf wrote all its records" "$dir/$name.log" ||
    fail "$name: not killed by SIG$signal after the final flush: $(grep 'was killed' "$dir/$name.log")"
  [[ -z $(ls -A "$GPUPERF_LIVE_DIR") ]] || fail "$name: live pages left: $(ls "$GPUPERF_LIVE_DIR")"
  rm -f "$GPUPERF_LIVE_DIR"/*
}

expect_status() {
  [[ $2 -eq $3 ]] || fail "$1: record exited $2, want $3: $(grep -v '^fake-cupti' "$dir/$1.log" | tail -4)"
}

# --- a process group's SIGTERM ------------------------------------------------------------
# timeout sends its signal to record and to its own process group: the program must get it
# through record only, and a second copy during the flush must not end it halfway. SIGALRM is
# what timeout's own timer sends it when the time is up.
buffer=65536 record timeout 100000 default timeout --preserve-status -s TERM 600
timeout_job=$record_job
if wait_for "$dir/timeout.ready"; then
  [[ $(app_group timeout) == "$(app_pid timeout)" ]] || fail "timeout: the program shares a process group"
  kill -ALRM "$timeout_job"
fi
wait "$timeout_job"
expect_status timeout $? 143
everything_kept timeout 100000 TERM

# kill -- -PGID on a record that has a session (and process group) of its own.
buffer=65536 record group 100000 default setsid
if wait_for "$dir/group.ready"; then
  record_pid=$(ps -o ppid= -p "$(app_pid group)" | tr -d ' ')
  group_id=$(ps -o pgid= -p "$record_pid" | tr -d ' ')
  [[ $group_id == "$record_pid" && $group_id != "$(ps -o pgid= -p $$ | tr -d ' ')" ]] ||
    fail "group: record $record_pid is not the leader of a group of its own ($group_id)"
  [[ $(app_group group) == "$(app_pid group)" ]] || fail "group: the program shares record's process group"
  kill -TERM -- "-$group_id"
fi
wait "$record_job"
expect_status group $? 143
everything_kept group 100000 TERM

# Two SIGTERMs with no record in between: the second lands on another thread while the first's
# handler waits for the final flush, and waits for it too.
buffer=65536 record second_term 100000 second_term
wait "$record_job"
expect_status second_term $? 143
expect_log second_term "fake-app: a second SIGTERM during the first one's handler"
everything_kept second_term 100000 TERM

# A program with its own SIGTERM handler still sees the group's SIGTERM once.
record own_term 2000 own setsid
if wait_for "$dir/own_term.ready"; then
  group_id=$(ps -o pgid= -p "$(ps -o ppid= -p "$(app_pid own_term)" | tr -d ' ')" | tr -d ' ')
  kill -TERM -- "-$group_id"
  for ((i = 0; i < 12000; i++)); do grep -q "sigterm_calls=[1-9]" "$dir/own_term.log" && break; sleep 0.01; done
  touch "$dir/own_term.release"
fi
wait "$record_job"
expect_status own_term $? 0
expect_log own_term "fake-app: released sigint_calls=0 sigterm_calls=1"
expect_log own_term "lost      nothing"
[[ $(summary_kernels own_term) == 2000 ]] || fail "own_term: $(summary_kernels own_term) of 2000 kernels"

# A record killed by SIGKILL does not leave its program (in a group of its own) running on:
# the program gets SIGTERM, flushes and ends.
# (Through a shell of its own, which notes the SIGKILL in the log rather than on the test's output.)
record orphan 2000 default bash -c '"$@"; exit $?' shell setsid
if wait_for "$dir/orphan.ready"; then
  orphan=$(app_pid orphan)
  kill -KILL "$(ps -o ppid= -p "$orphan" | tr -d ' ')"
  ended=0
  for ((i = 0; i < 12000; i++)); do
    [[ ! -e /proc/$orphan || $(cut -d' ' -f3 "/proc/$orphan/stat" 2> /dev/null) == Z ]] && { ended=1; break; }
    sleep 0.01
  done
  [[ $ended == 1 ]] || fail "orphan: the program outlived its SIGKILLed record"
  log_has orphan "no signal ended the wait" && fail "orphan: the program ran on until it gave up"
fi
wait "$record_job"
expect_status orphan $? 137
"$GPUPERF" dump "$dir/orphan" > "$dir/orphan.dump" 2>&1
grep -q '^process .* end_ns=[1-9]' "$dir/orphan.dump" || fail "orphan: the trace has no final flush"
[[ $(grep -c '^kernel ' "$dir/orphan.dump") == 2000 ]] || fail "orphan: $(grep -c '^kernel ' "$dir/orphan.dump") of 2000 kernels"
[[ -z $(ls -A "$GPUPERF_LIVE_DIR") ]] || fail "orphan: live pages left: $(ls "$GPUPERF_LIVE_DIR")"

# --- every signal whose default action ends the program, sent to it ------------------------
for signal in HUP INT QUIT TERM ABRT PIPE ALRM USR1 USR2 VTALRM PROF XCPU XFSZ IO PWR STKFLT \
  SEGV BUS FPE ILL; do
  name=kill_$signal
  record "$name" 2000 default
  wait_for "$dir/$name.ready" && kill -"$signal" "$(app_pid "$name")"
  wait "$record_job"
  expect_status "$name" $? $((128 + $(signal_number "$signal")))
  everything_kept "$name" 2000 "$signal"
done

# --- faults, raised for real; a broken pipe ------------------------------------------------
for fault in SEGV BUS FPE ILL PIPE; do
  name=real_$fault
  how=$(tr '[:upper:]' '[:lower:]' <<< "$fault")
  record "$name" 2000 "$how"
  wait "$record_job"
  expect_status "$name" $? $((128 + $(signal_number "$fault")))
  everything_kept "$name" 2000 "$fault"
done

# --- what the program set up stays as it was -------------------------------------------------
# SIGPIPE ignored (as Python does): a write to a closed pipe fails and a sent SIGPIPE does nothing.
record ignore_pipe 2000 ignore_pipe
if wait_for "$dir/ignore_pipe.ready"; then
  kill -PIPE "$(app_pid ignore_pipe)"
  touch "$dir/ignore_pipe.release"
fi
wait "$record_job"
expect_status ignore_pipe $? 0
expect_log ignore_pipe "fake-app: wrote to a closed pipe: -1 (Broken pipe)"
expect_log ignore_pipe "lost      nothing"
# A SIGSEGV handler of the program's own (a JVM's) gets its faults and recovers.
record own_segv 2000 own_segv
wait "$record_job"
expect_status own_segv $? 0
expect_log own_segv "fake-app: segv_handled=1"
expect_log own_segv "lost      nothing"

# --- core dumps: the same as without gpuperf --------------------------------------------------
# (perl reports the wait status's core flag; the cores land in $dir/cores, removed with $dir.)
mkdir -p "$dir/cores"
ended() { # ended HOW SIGNAL [ENV...]: "signal core" of the app ending so, run directly
  local how=$1 signal=$2; shift 2
  (cd "$dir/cores" && ulimit -c unlimited &&
    env --default-signal "$@" FAKE_APP_READY="$dir/cores/$how.ready" perl -e '
      my $pid = fork;
      if ($pid == 0) { open STDOUT, ">", "/dev/null"; exec @ARGV; exit 127; }
      if ($ENV{SEND} ne "") {
        for (1 .. 12000) { last if -s $ENV{FAKE_APP_READY}; select(undef, undef, undef, 0.01); }
        kill $ENV{SEND}, $pid;
      }
      waitpid $pid, 0;
      printf "%d %d\n", $? & 127, ($? & 128) ? 1 : 0;' "$app" await_signal 200 "$how")
}
for run in "default QUIT" "segv SEGV"; do
  read -r how signal <<< "$run"
  send=; [[ $how == default ]] && send=$signal
  rm -f "$dir/cores/$how.ready"
  alone=$(SEND=$send ended "$how" "$signal")
  rm -f "$dir/cores/$how.ready"
  injected=$(SEND=$send ended "$how" "$signal" CUDA_INJECTION64_PATH="$lib" \
    GPUPERF_OUTPUT_DIR="$dir/cores/trace_$how" GPUPERF_FLUSH_PERIOD_MS=600000)
  [[ $alone == "$(signal_number "$signal") "* ]] || fail "core $signal: the app alone ended '$alone'"
  [[ $injected == "$alone" ]] || fail "core $signal: '$injected' (signal, core) with gpuperf, '$alone' without"
  [[ -n $(ls "$dir/cores/trace_$how"/*.gpt 2>/dev/null) ]] || fail "core $signal: no trace"
done
rm -f "$GPUPERF_LIVE_DIR"/*

# --- the terminal's foreground job: as before ----------------------------------------------
# In a real terminal (a detached tmux session running an interactive bash), record and the
# program share the job's process group: Ctrl+C reaches the program from the terminal, once
# (record does not pass the terminal's own signals on).
if command -v tmux > /dev/null; then
  socket=gpuperf-signals-test-$$
  tmux_() { tmux -L "$socket" -f /dev/null "$@"; }
  tmux_ new-session -d -s sig -x 150 -y 40 "env -i PATH=$PATH HOME=$dir HISTFILE=/dev/null TERM=xterm bash --norc --noprofile -i"
  tmux_ send-keys -t sig "FAKE_APP_READY=$dir/tty.ready FAKE_APP_RELEASE=$dir/tty.release GPUPERF_LIVE_DIR=$GPUPERF_LIVE_DIR '$GPUPERF' record -o '$dir/tty' --inject-lib '$lib' -- '$app' await_signal 2000 own > '$dir/tty.log' 2>&1; echo \$? > '$dir/tty.status'" Enter
  if wait_for "$dir/tty.ready"; then
    [[ $(app_group tty) != "$(app_pid tty)" ]] || fail "tty: the program got a process group of its own"
    tmux_ send-keys -t sig C-c
    for ((i = 0; i < 12000; i++)); do grep -q "sigint_calls=[1-9]" "$dir/tty.log" && break; sleep 0.01; done
    touch "$dir/tty.release"
    wait_for "$dir/tty.status"
    [[ $(cat "$dir/tty.status") == 0 ]] || fail "tty: record exited $(cat "$dir/tty.status")"
    expect_log tty "fake-app: released sigint_calls=1 sigterm_calls=0"
    expect_log tty "lost      nothing"
  fi
  tmux_ kill-server 2> /dev/null
else
  echo "note: no tmux, the terminal's foreground case is not checked"
fi
finish
