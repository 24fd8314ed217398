#!/usr/bin/env bash
# The injection library at its limits, inside the fake CUDA app (tests/fakes): many threads
# asking CUPTI for buffers at once lose nothing within the default memory budget and lose
# counted, reported records past a hard cap; 10,000 short-lived launching threads leave memory
# flat; a killed, aborted or exec'ing process is reported honestly and `record` exits with its
# status; process trees give one trace per process; a second CUPTI client that takes over the
# activity buffers is noticed in one line. docs/recording.md describes each behaviour.
source "$(dirname "$0")/lib.sh"
bin=$GPUPERF_BINARY_DIR
lib=${INJECT_LIB:-$bin/src/inject/libgpuperf_inject.so}
app=$bin/tests/fakes/fake_cuda_app
[[ -x $app && -f $lib ]] || { echo "skip: no injection library or fake app in this build"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

# rec NAME EXPECTED_EXIT [RECORD_OPTIONS...] -- ARGS...: records the fake app; its output
# (app lines and record's summary) lands in $dir/NAME.log.
rec() {
  local name=$1 want_rc=$2; shift 2
  local options=()
  while [[ $1 != "--" ]]; do options+=("$1"); shift; done
  shift
  "$GPUPERF" record -o "$dir/$name" --force --inject-lib "$lib" "${options[@]}" -- "$@" \
    > "$dir/$name.log" 2>&1
  local rc=$?
  [[ $rc -eq $want_rc ]] || fail "$name: record exited $rc, want $want_rc ($(tail -3 "$dir/$name.log"))"
}
log() { cat "$dir/$1.log"; }
app_field() { grep -h "^fake-app: .*$2=" "$dir/$1.log" | head -1 | sed -n "s/.* $2=\([0-9]*\).*/\1/p"; }
fake_field() { grep -h '^fake-cupti:' "$dir/$1.log" | tail -1 | sed -n "s/.* $2=\([0-9]*\).*/\1/p"; }
summary_kernels() { sed -n 's/^  kernels *\([0-9,]*\).*/\1/p' "$dir/$1.log" | tr -d ,; }
expect_log() { grep -qF -- "$2" "$dir/$1.log" || fail "$1: output lacks '$2': $(grep -v '^fake' "$dir/$1.log" | head -8)"; }
commas() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<< "$1"; }
expect_no_log() { grep -qF -- "$2" "$dir/$1.log" && fail "$1: output has '$2'"; }

# --- many threads asking for buffers at once ------------------------------------------------
# 32 threads launch flat out: CUPTI holds a buffer per thread plus the full ones waiting for
# its worker. Within the default budget (64 MiB soft, growing to the cap) nothing is lost.
rec burst 0 -- "$app" threads 32 8000
[[ $(summary_kernels burst) -eq 256000 ]] || fail "burst: $(summary_kernels burst) of 256000 kernels recorded"
expect_log burst "lost      nothing"
[[ $(fake_field burst records_dropped) -eq 0 ]] || fail "burst: CUPTI dropped $(fake_field burst records_dropped)"
peak=$(stat_value "$dir/burst" memory_peak_bytes)
[[ -n $peak && $peak -gt 0 && $peak -le $((1024 << 20)) ]] || fail "burst: memory_peak_bytes '$peak'"
"$GPUPERF" report "$dir/burst" 2>/dev/null | grep -q "recorder memory: peak" || fail "burst: report does not show the recorder's peak memory"
"$GPUPERF" report --format json "$dir/burst" 2>/dev/null | grep -q "\"memory_peak_bytes\": *$peak" \
  || fail "burst: JSON report lacks memory_peak_bytes $peak"
# Past a hard cap of 4 MiB the same burst loses records: CUPTI's count, reported as lost,
# with one line saying why and how to change it.
rec capped 0 --max-memory 4 -- "$app" threads 32 8000
dropped=$(fake_field capped records_dropped)
[[ $dropped -gt 0 ]] || fail "capped: CUPTI dropped nothing under a 4 MiB cap"
[[ $(stat_value "$dir/capped" cupti_dropped_records) -eq $dropped ]] || fail "capped: trace counts $(stat_value "$dir/capped" cupti_dropped_records) dropped, CUPTI $dropped"
expect_log capped "LOST      $(commas "$dropped") activity records CUPTI dropped"
[[ $(grep -c 'reached its cap of 4 MiB' "$dir/capped.log") -eq 1 ]] || fail "capped: want one cap line"
[[ $(stat_value "$dir/capped" memory_cap_refusals) -ge 1 ]] || fail "capped: refusals not counted"
# Batches translated but refused at the cap count too: every kernel is recorded or counted.
queue_full=$(stat_value "$dir/capped" writer_queue_full)
# (The device, context and sync records are among the dropped ones at times: up to 3 more.)
total=$(( $(summary_kernels capped) + dropped + ${queue_full:-0} ))
[[ $total -ge 256000 && $total -le 256003 ]] \
  || fail "capped: $(summary_kernels capped) recorded + $dropped dropped + ${queue_full:-0} refused != 256000"

# --- thread churn ---------------------------------------------------------------------------
# 10,000 short-lived launching threads: each one's buffers are freed once drained, so memory
# stays flat (fake_cuda_app gives up, failing, after 512 MiB of growth).
rec churn 0 -- "$app" churn 10000 2
[[ $(summary_kernels churn) -eq 20000 ]] || fail "churn: $(summary_kernels churn) of 20000 kernels"
expect_log churn "lost      nothing"
freed=$(stat_value "$dir/churn" thread_buffers_freed)
[[ ${freed:-0} -ge 9990 ]] || fail "churn: only ${freed:-0} exited threads' buffers freed"
held=$(stat_value "$dir/churn" thread_buffer_bytes)
[[ ${held:-0} -lt $((1 << 20)) ]] || fail "churn: $held bytes of thread buffers still held at the end"
warm=$(app_field churn rss_warm_kb) end=$(app_field churn rss_end_kb)
[[ -n $warm && -n $end && $((end - warm)) -lt $((256 * 1024)) ]] \
  || fail "churn: RSS grew from ${warm:-?} to ${end:-?} KiB over 9,000 threads"

# --- how the process ended -----------------------------------------------------------------
# SIGKILL: nothing can flush; record says so, and exits as a shell would (128+9).
rec killed 137 -- "$app" self_kill 300 700
expect_log killed "was killed by signal 9 (SIGKILL): up to one flush period (500 ms) of records may be missing"
expect_log killed "LOST      up to one flush period of records from 1 process that ended before its final flush"
expect_no_log killed "lost      nothing"
[[ $(summary_kernels killed) -eq 300 ]] || fail "killed: $(summary_kernels killed) of the 300 kernels flushed before the kill"
# SIGTERM and an uncaught exception (SIGABRT): the handler's final flush keeps everything.
rec terminated 143 -- "$app" signal 300
expect_log terminated "was killed by signal 15 (SIGTERM) after gpuperf wrote all its records"
expect_log terminated "lost      nothing"
rec aborted 134 -- "$app" abort 300
expect_log aborted "was killed by signal 6 (SIGABRT) after gpuperf wrote all its records"
expect_log aborted "lost      nothing"
[[ $(summary_kernels aborted) -eq 300 ]] || fail "aborted: $(summary_kernels aborted) of 300 kernels"
# _exit: no handler runs; what is missing is said, not counted as nothing.
rec os_exit 0 -- "$app" os_exit 200 700
expect_log os_exit "ended before its final flush"
"$GPUPERF" record --help 2>&1 | grep -q "128+N" || fail "record --help does not state the exit status"

# --- process trees --------------------------------------------------------------------------
# bash -c with two CUDA programs: one trace each, one summary, one report.
rec tree 0 -- bash -c "'$app' basic && '$app' threads 2 100"
[[ $(ls "$dir/tree"/*.gpt | wc -l) -eq 2 ]] || fail "tree: $(ls "$dir/tree" | tr '\n' ' ')"
expect_log tree "recorded 2 processes"
[[ $(summary_kernels tree) -eq 205 ]] || fail "tree: $(summary_kernels tree) of 205 kernels"
"$GPUPERF" report "$dir/tree" > "$dir/tree.report" 2>&1 || fail "tree: report failed"
# fork before CUDA starts, then both use it: two traces.
rec fork_then_cuda 0 -- "$app" fork_then_cuda 20
[[ $(ls "$dir/fork_then_cuda"/*.gpt | wc -l) -eq 2 ]] || fail "fork_then_cuda: want 2 traces"
[[ $(summary_kernels fork_then_cuda) -eq 40 ]] || fail "fork_then_cuda: $(summary_kernels fork_then_cuda) of 40 kernels"
# exec after using CUDA: the old image leaves without its final flush (said), the new image
# (same pid, same program) gets its own file rather than truncating the old one.
rec exec_after_cuda 0 -- "$app" exec_after_cuda 50 700
[[ $(ls "$dir/exec_after_cuda"/*.gpt | wc -l) -eq 2 ]] || fail "exec_after_cuda: want 2 traces"
[[ $(summary_kernels exec_after_cuda) -eq 55 ]] || fail "exec_after_cuda: $(summary_kernels exec_after_cuda) of 55 kernels"
expect_log exec_after_cuda "from 1 process that ended before its final flush"

# --- another CUPTI client starting after gpuperf --------------------------------------------
# It cannot subscribe (gpuperf holds the slot) and its buffer registration replaces
# gpuperf's: noticed once, said in one line, counted as lost.
rec late 0 --flush-period 100 -- "$app" late_profiler 200000 1000
expect_log late "subscribe=CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"
[[ $(grep -c "replaced gpuperf's activity buffers" "$dir/late.log") -eq 1 ]] || fail "late: want one line about the takeover"
[[ $(stat_value "$dir/late" activity_buffers_taken) -eq 1 ]] || fail "late: takeover not counted"
expect_log late "another CUPTI client took over the activity buffers"
# Without gpuperf's callbacks (no stacks, no API records) nothing outruns a buffer, and the
# late client even gets the subscriber slot; libgpuperf_preload.so sees its buffer
# registration instead: the same one line and count.
rec late_nosub 0 --flush-period 100 --no-stacks --activities kernel,memcpy,memset -- \
  "$app" late_profiler 200000 1000
expect_log late_nosub "subscribe=CUPTI_SUCCESS"
[[ $(grep -c "replaced gpuperf's activity buffers" "$dir/late_nosub.log") -eq 1 ]] ||
  fail "late_nosub: want one line about the takeover: $(grep -v '^fake' "$dir/late_nosub.log" | head -5)"
[[ $(stat_value "$dir/late_nosub" activity_buffers_taken) -eq 1 ]] || fail "late_nosub: takeover not counted"
# With the preload left out, that case goes unseen (docs/recording.md says so).
GPUPERF_PRELOAD=off rec late_nopreload 0 --flush-period 100 --no-stacks \
  --activities kernel,memcpy,memset -- "$app" late_profiler 200000 1000
grep -q "replaced gpuperf's" "$dir/late_nopreload.log" && fail "late_nopreload: takeover claimed"
# ...and never without one: an ordinary busy run does not claim a takeover.
grep -q "replaced gpuperf's" "$dir/burst.log" "$dir/churn.log" && fail "takeover claimed without a second client"
# --- another CUDA profiler in the same run: the one started first keeps the process ---------
# CUDA loads one injected tool per process and ncu refuses to run when CUDA_INJECTION64_PATH is
# someone else's, so record steps aside (no injection, one line with the fix, the command's
# own exit status) instead of breaking the other tool.
mkdir -p "$dir/tools"
printf '#!/bin/sh\n# stands in for Nsight Compute: runs the program it is given\nshift 2; exec "$@"\n' > "$dir/tools/ncu"
chmod +x "$dir/tools/ncu"
rec inside_ncu 0 -- "$dir/tools/ncu" -c 3 "$app" basic
expect_log inside_ncu "gpuperf: Nsight Compute (ncu) is profiling this command (the command is ncu)"
expect_log inside_ncu "Use one at a time: gpuperf record -- $app basic"
[[ -z $(ls "$dir/inside_ncu" 2>/dev/null) ]] || fail "inside_ncu: gpuperf recorded despite stepping aside"
grep -q "^fake-app:" "$dir/inside_ncu.log" || fail "inside_ncu: the program did not run"
NV_TPS_LAUNCH_TOKEN=1 rec under_nsight 3 -- bash -c "'$app' basic; exit 3"
expect_log under_nsight "an Nsight tool is profiling this command (NV_TPS_LAUNCH_TOKEN is set)"
[[ -z $(ls "$dir/under_nsight" 2>/dev/null) ]] || fail "under_nsight: gpuperf recorded despite stepping aside"
CUDA_INJECTION64_PATH=/nowhere/libother_tool.so rec other_injection 0 -- true
expect_log other_injection "another CUDA tool (/nowhere/libother_tool.so) is profiling this command"
# gpuperf's own library in the variable (a nested record) is not another tool.
CUDA_INJECTION64_PATH=$lib rec nested 0 -- "$app" basic
expect_no_log nested "steps aside"
[[ -n $(ls "$dir/nested"/*.gpt 2>/dev/null) ]] || fail "nested: no trace"
finish
