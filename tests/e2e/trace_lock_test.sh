#!/usr/bin/env bash
# One writer per trace file (docs/trace-format.md, "One writer at a time"), with the fake
# CUDA app (tests/fakes) held alive by its own knobs, never by sleeps: while a process still
# records, `symbolize` (alone, or as record's own step) leaves its trace alone with one line,
# `record --force` removes nothing, `report` and record's summary say "still being recorded";
# afterwards the trace is whole. A forked child that outlives its parent does not keep the
# parent's trace "being recorded". A link to or a copy of a trace in a directory is read once.
source "$(dirname "$0")/lib.sh"
use_fake_app
export GPUPERF_LIVE_DIR=$dir/live  # no live pages outside the test
pids=()
cleanup() {
  touch "$dir"/release-* 2>/dev/null  # lets every held app go
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

# waits up to 30 s for CONDITION (a command) to succeed
wait_for() { for _ in $(seq 300); do "$@" && return 0; sleep 0.1; done; return 1; }
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<< "$2" | head -1; }
kernels() { "$GPUPERF" dump "$1" 2>/dev/null | grep -c '^kernel '; }
has_kernels() { [[ $(kernels "$1") -eq $2 ]]; }
# The trace in DIR, once there is exactly one.
only_trace() { local files=("$1"/*.gpt); [[ ${#files[@]} -eq 1 && -f ${files[0]} ]] && echo "${files[0]}"; }
# hold NAME DIR [RECORD_OPTIONS...]: records `live 200` into DIR, held until $dir/release-NAME
# exists; sets held_pid (record's pid) and waits until all 200 kernels are in the trace.
hold() {
  local name=$1 out=$2; shift 2
  "$GPUPERF" record -o "$out" --inject-lib "$lib" "$@" -- \
    env FAKE_APP_RELEASE="$dir/release-$name" "$app" live 200 600000 \
    > "$dir/$name.out" 2> "$dir/$name.err" &
  held_pid=$!
  pids+=("$held_pid")
  wait_for grep -qs '^fake-app: live ' "$dir/$name.out" || fail "$name: the app never ran ($(cat "$dir/$name.err"))"
  wait_for eval 'trace=$(only_trace "$out")' || fail "$name: no trace in $out"
  wait_for has_kernels "$trace" 200 || fail "$name: the trace never held the 200 kernels ($(kernels "$trace"))"
}
release() { touch "$dir/release-$1"; }
# whole TRACE KERNELS: the trace holds exactly KERNELS kernels, every process finished, and
# reading it warns of nothing (no damaged, torn or repeated chunk, no lost process record).
whole() {
  local err processes starts
  err=$("$GPUPERF" report "$1" 2>&1 >/dev/null)
  [[ -z $err ]] || fail "report $1 warns: $err"
  [[ $(kernels "$1") -eq $2 ]] || fail "$1 holds $(kernels "$1") kernels, want $2"
  # Each process wrote its record at its start and again at its end.
  processes=$("$GPUPERF" dump "$1" 2>/dev/null | grep '^process ')
  starts=$(grep -c 'end_ns=0$' <<< "$processes")
  [[ $starts -ge 1 && $(grep -vc 'end_ns=0$' <<< "$processes") -eq $starts ]] ||
    fail "$1: a process record is missing: $processes"
}

# left_alone RECORD_STDERR TRACE PID: record's symbolize step skipped TRACE, still being
# recorded by PID, in one line, and its summary counted it as such, not as unfinished.
left_alone() {
  grep -qxF "gpuperf: warning: skipped $2 is still being recorded by pid $3: symbolize it when it ends" "$1" ||
    fail "record's symbolize step did not leave $2 alone: $(cat "$1")"
  grep -qxF "  running   $2 is still being recorded by pid $3: counted as far as it is written" "$1" ||
    fail "record's summary does not say $2 is still being recorded: $(cat "$1")"
  grep -q "final flush" "$1" && fail "record calls pid $3 unfinished: $(cat "$1")"
}

# --- symbolize, report and record --force during a recording ------------------------------
hold live "$dir/live-run" --no-symbolize
pid=$(field pid "$(grep '^fake-app: pid=' "$dir/live.out")")
[[ $trace == "$dir/live-run/fake_cuda_app.$pid.gpt" ]] || fail "trace $trace, app pid $pid"
still="$trace is still being recorded by pid $pid"

"$GPUPERF" symbolize "$dir/live-run" > "$dir/sym.out" 2> "$dir/sym.err"
rc=$?
[[ $rc -eq 0 ]] || fail "symbolize of a directory being recorded: exit $rc"
[[ $(cat "$dir/sym.err") == "gpuperf: warning: skipped $still: symbolize it when it ends" ]] ||
  fail "symbolize during the recording said: $(cat "$dir/sym.err")"
"$GPUPERF" symbolize "$trace" > /dev/null 2> "$dir/sym1.err"
rc=$?
[[ $rc -eq 1 && $(cat "$dir/sym1.err") == "gpuperf: error: $still: symbolize it when it ends" ]] ||
  fail "symbolize of the file being recorded: exit $rc: $(cat "$dir/sym1.err")"

"$GPUPERF" report "$dir/live-run" > "$dir/report.out" 2> "$dir/report.err"
grep -qF "gpuperf: warning: $still: read as far as it is written" "$dir/report.err" ||
  fail "report's warnings do not say it is still being recorded: $(cat "$dir/report.err")"
grep -q "pid $pid .*(still being recorded)" "$dir/report.out" ||
  fail "report's process line: $(grep "pid $pid" "$dir/report.out")"
grep -qF "WARN pid $pid: 1 the process is still being recorded" "$dir/report.out" ||
  fail "report's warnings section: $(sed -n '/^!!/,/^$/p' "$dir/report.out")"
grep -q "final flush\|ends inside a chunk" "$dir/report.out" "$dir/report.err" &&
  fail "report calls a recording in progress unfinished: $(grep -h "final flush\|ends inside" "$dir"/report.*)"
"$GPUPERF" flamegraph --folded -o "$dir/live.folded" "$dir/live-run" 2> "$dir/flame.err"
grep -qF "DATA LOSS: pid $pid is still being recorded" "$dir/flame.err" ||
  fail "flamegraph's loss line: $(cat "$dir/flame.err")"

ls "$dir/live-run" > "$dir/before-force"
"$GPUPERF" record --force -o "$dir/live-run" --inject-lib "$lib" -- "$app" basic \
  > "$dir/force.out" 2> "$dir/force.err"
rc=$?
[[ $rc -ne 0 ]] || fail "record --force over a recording in progress exited 0"
[[ $(cat "$dir/force.err") == "gpuperf: error: --force removes no recording still in progress: $still; nothing removed" ]] ||
  fail "record --force said: $(cat "$dir/force.err")"
grep -q '^fake-app' "$dir/force.out" && fail "record --force ran the command anyway"
ls "$dir/live-run" | diff - "$dir/before-force" > /dev/null || fail "record --force removed or added files"
[[ -s $trace ]] || fail "record --force emptied the trace being recorded"

release live
wait "$held_pid"
rc=$?
[[ $rc -eq 0 ]] || fail "the held recording exited $rc: $(cat "$dir/live.err")"
whole "$dir/live-run" 200
"$GPUPERF" symbolize "$dir/live-run" > "$dir/sym2.out" 2> "$dir/sym2.err"
rc=$?
[[ $rc -eq 0 && $(cat "$dir/sym2.out") == "symbolized "* ]] ||
  fail "symbolize after the recording: exit $rc: $(cat "$dir/sym2.out" "$dir/sym2.err")"
[[ $("$GPUPERF" dump "$trace" | grep -c '^symbol ') -gt 0 ]] || fail "no symbols after symbolize"
whole "$dir/live-run" 200

# --- a link to or a copy of a trace is read once --------------------------------------------
mkdir "$dir/dup"
cp "$trace" "$dir/dup/a.gpt"
ln "$dir/dup/a.gpt" "$dir/dup/b.gpt"
ln -s a.gpt "$dir/dup/c.gpt"
cp "$dir/dup/a.gpt" "$dir/dup/d.gpt"
"$GPUPERF" report "$dir/dup" > "$dir/dup.out" 2> "$dir/dup.err"
grep -q 'kernels [^(]* (200)' "$dir/dup.out" || fail "the directory of one trace and its links and copy: $(grep 'GPU time' "$dir/dup.out")"
[[ $(cat "$dir/dup.err") == "gpuperf: warning: skipped $dir/dup/b.gpt: the same file as $dir/dup/a.gpt (a link to it)
gpuperf: warning: skipped $dir/dup/c.gpt: the same file as $dir/dup/a.gpt (a link to it)
gpuperf: warning: skipped $dir/dup/d.gpt: a copy of $dir/dup/a.gpt (the trace of the same process, pid $pid): its records would count twice" ]] ||
  fail "the links and the copy were not each named once: $(cat "$dir/dup.err")"

# --- two records into one -o at the same time ------------------------------------------------
# The first passes its check of the directory while it is empty, then its command waits for
# the second's trace to be written before it runs; the first's symbolize step and summary then
# meet the second's trace still being recorded.
"$GPUPERF" record -o "$dir/shared" --inject-lib "$lib" -- sh -c \
  'touch "$1/first-started"; until [ -e "$1/go-first" ]; do sleep 0.05; done; exec "$2" basic' \
  sh "$dir" "$app" > "$dir/first.out" 2> "$dir/first.err" &
first=$!
pids+=("$first")
wait_for test -e "$dir/first-started" || fail "the first record never started its command"
hold second "$dir/shared"
second_pid=$(field pid "$(grep '^fake-app: pid=' "$dir/second.out")")
second_trace=$trace
touch "$dir/go-first"
wait "$first"
rc=$?
[[ $rc -eq 0 ]] || fail "the first record exited $rc: $(cat "$dir/first.err")"
left_alone "$dir/first.err" "$second_trace" "$second_pid"
release second
wait "$held_pid" || fail "the second record failed: $(cat "$dir/second.err")"
whole "$second_trace" 200
first_kernels=$(field kernels "$(grep '^fake-app: pid=' "$dir/first.out")")
whole "$dir/shared" $((200 + first_kernels))

# --- record -- sh -c 'app & ...': the command ends while its background child records --------
"$GPUPERF" record -o "$dir/background" --inject-lib "$lib" -- sh -c \
  'FAKE_APP_RELEASE="$1/release-background" "$2" live 200 600000 > "$1/background-app.out" &
   until grep -qs "^fake-app: live " "$1/background-app.out" && [ -n "$(ls "$1/background"/*.gpt 2>/dev/null)" ]; do sleep 0.05; done' \
  sh "$dir" "$app" > "$dir/background.out" 2> "$dir/background.err"
rc=$?
[[ $rc -eq 0 ]] || fail "record of the shell exited $rc: $(cat "$dir/background.err")"
bg_pid=$(field pid "$(grep '^fake-app: pid=' "$dir/background-app.out")")
bg_trace="$dir/background/fake_cuda_app.$bg_pid.gpt"
left_alone "$dir/background.err" "$bg_trace" "$bg_pid"
release background
wait_for has_kernels "$bg_trace" 200 || fail "the background child's trace: $(kernels "$bg_trace") kernels"
ended() { ! "$GPUPERF" report "$bg_trace" 2>&1 >/dev/null | grep -q "still being recorded"; }
wait_for ended || fail "the background child never finished its trace"
whole "$bg_trace" 200

# --- a forked child (no exec) that outlives its parent ---------------------------------------
"$GPUPERF" record -o "$dir/fork" --inject-lib "$lib" -- \
  env FAKE_APP_RELEASE="$dir/release-fork" "$app" fork_linger 50 \
  > "$dir/fork.out" 2> "$dir/fork.err"
rc=$?
[[ $rc -eq 0 ]] || fail "record of fork_linger exited $rc: $(cat "$dir/fork.err")"
child=$(field pid "$(grep '^fake-app: pid=.* scenario=fork_linger-child' "$dir/fork.out")")
parent=$(field pid "$(grep '^fake-app: pid=.* scenario=fork_linger ' "$dir/fork.out")")
[[ -n $child && -d /proc/$child ]] || fail "the forked child ($child) is not alive after record"
grep -q "still being recorded" "$dir/fork.err" &&
  fail "the forked child kept its parent's trace locked: $(cat "$dir/fork.err")"
fork_trace="$dir/fork/fake_cuda_app.$parent.gpt"
[[ $("$GPUPERF" dump "$fork_trace" | grep -c '^symbol ') -gt 0 ]] ||
  fail "record's symbolize step did not symbolize the parent's trace"
[[ -d /proc/$child ]] || fail "the forked child ended before the checks"
whole "$fork_trace" 100
release fork

finish
