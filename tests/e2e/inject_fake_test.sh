#!/usr/bin/env bash
# The real injection library inside a CUDA "application" driven by the fake libcupti
# (tests/fakes): every scenario's kernels are recorded or counted as lost, stacks are
# joined, exit/signal/fork/_exit paths flush, a second subscriber degrades gracefully.
source "$(dirname "$0")/lib.sh"
use_fake_app

# run NAME EXPECTED_EXIT SCENARIO ARGS...: records; leaves the app's line in $said.
run() {
  local name=$1 want_rc=$2; shift 2
  rm -rf "$dir/$name"
  "$GPUPERF" record -o "$dir/$name" --inject-lib "$lib" ${record_flags:-} -- "$app" "$@" > "$dir/$name.out" 2> "$dir/$name.err"
  local rc=$?
  [[ $rc -eq $want_rc ]] || fail "$name: exit $rc, want $want_rc ($(tail -2 "$dir/$name.err"))"
  said=$(grep -h '^fake-app:' "$dir/$name.out" "$dir/$name.err" | grep -v 'fork-child' | head -1)
}
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<< "$2"; }
count() { "$GPUPERF" dump "$dir/$1" 2>/dev/null | grep -c "^$2 "; }

for scenario in "basic" "threads 4 2000" "nested 200" "graph" "exit_flush 500" "nvtx" "device_reset" "many 100000" "driver_api 20"; do
  set -- $scenario
  name=$1
  run "$name" 0 "$@"
  want=$(field kernels "$said")
  got=$(count "$name" kernel)
  [[ $got -eq $want ]] || fail "$name: $got kernels recorded, app launched $want"
  links=$(count "$name" launch_link)
  joined=$("$GPUPERF" dump "$dir/$name" | grep '^launch_link ' | grep -vc 'stack_id=0 ')
  [[ $links -gt 0 && $joined -eq $links ]] || fail "$name: $joined of $links launch links have a stack"
done

# Nested runtime->driver launches: each kernel carries the driver call's id, which must
# map to the outermost (runtime) call's stack and name.
"$GPUPERF" dump "$dir/nested" | grep '^launch_link ' | grep -vq 'api_name="cudaLaunchKernel"' \
  && fail "nested: a link is not named after the outermost call"

# API records come from gpuperf's own callbacks: one per outermost call, so the driver calls
# the runtime makes for the app are part of the runtime call; getters (cudaGetDevice) are
# not traced; return codes are kept. GPUPERF_API_SOURCE=cupti takes CUPTI's records instead,
# every call of both domains.
api_count() { "$GPUPERF" dump "$dir/$1" | grep '^api ' | grep -c "domain=$2"; }
run threads 0 threads 4 2000
[[ $(api_count threads runtime) -eq $(field runtime_api "$said") && $(api_count threads driver) -eq 0 ]] \
  || fail "threads: $(api_count threads runtime) runtime and $(api_count threads driver) driver API records, want $(field runtime_api "$said") and 0"
# Host synchronizations carry the stack of the call that waited: the report's sync row
# names where the app synchronized.
"$GPUPERF" report "$dir/threads" --sections sync > "$dir/threads_sync.txt" 2>&1 || fail "threads: report"
grep -q 'context_synchronize .*DeviceSynchronize() (fake_app.cc:[0-9]*)' "$dir/threads_sync.txt" ||
  fail "threads: the sync row has no stack: $(grep -A3 Synchronization "$dir/threads_sync.txt")"
run driver_api 0 driver_api 20
[[ $(api_count driver_api driver) -eq 20 && $(api_count driver_api runtime) -eq 1 ]] \
  || fail "driver_api: $(api_count driver_api driver) driver / $(api_count driver_api runtime) runtime records, want 20 / 1"
"$GPUPERF" dump "$dir/driver_api" | grep '^api .*name="cudaMalloc"' | grep -q 'return_code=2$' \
  || fail "driver_api: the failing cudaMalloc lost its return code"
"$GPUPERF" dump "$dir/driver_api" | grep -q 'name="cudaGetDevice"' && fail "driver_api: cudaGetDevice was traced"
[[ $(stat_value "$dir/driver_api" api_calls_from_callbacks) -eq 21 ]] || fail "driver_api: api_calls_from_callbacks stat"
export GPUPERF_API_SOURCE=cupti
run threads_cupti 0 threads 4 2000
[[ $(api_count threads_cupti runtime) -eq $(field runtime_api "$said") && $(api_count threads_cupti driver) -eq $(field driver_api "$said") ]] \
  || fail "threads, CUPTI's API records: $(api_count threads_cupti runtime) runtime, $(api_count threads_cupti driver) driver"
run driver_api_cupti 0 driver_api 20
[[ $(api_count driver_api_cupti runtime) -eq 21 ]] || fail "driver_api, CUPTI's API records: getters missing"
unset GPUPERF_API_SOURCE

# --no-stacks never costs more than the default: API records stay on the callbacks (no
# CUPTI API activity kinds), only the stacks and their links are left out.
record_flags=--no-stacks run threads_no_stacks 0 threads 4 2000
[[ $(api_count threads_no_stacks runtime) -eq $(field runtime_api "$said") && $(api_count threads_no_stacks driver) -eq 0 ]] \
  || fail "--no-stacks: $(api_count threads_no_stacks runtime) runtime and $(api_count threads_no_stacks driver) driver API records, want callback records"
[[ $(stat_value "$dir/threads_no_stacks" api_calls_from_callbacks) -gt 0 && $(count threads_no_stacks launch_link) -eq 0 ]] \
  || fail "--no-stacks: API records not from callbacks, or launch links taken"
[[ $(count threads_no_stacks kernel) -eq $(field kernels "$said") ]] || fail "--no-stacks: kernels lost"

# Frame-pointer stacks (checked once each against libunwind) give the same stacks as
# libunwind alone: the count-weighted flame graphs are identical.
run threads_fp 0 threads 4 2000
[[ $(stat_value "$dir/threads_fp" fp_stacks_verified) -ge 1 ]] || fail "threads: no frame-pointer stack verified"
GPUPERF_UNWIND=libunwind run threads_libunwind 0 threads 4 2000
[[ -z $(stat_value "$dir/threads_libunwind" fp_stacks_verified) ]] || fail "GPUPERF_UNWIND=libunwind still walked frame pointers"
"$GPUPERF" flamegraph --folded --weight count -o "$dir/fp.folded" "$dir/threads_fp" || fail "flamegraph (fp)"
"$GPUPERF" flamegraph --folded --weight count -o "$dir/lu.folded" "$dir/threads_libunwind" || fail "flamegraph (libunwind)"
grep -q 'LaunchKernel;' "$dir/fp.folded" || fail "threads: the launching function is not on the stacks"
diff <(sort "$dir/fp.folded") <(sort "$dir/lu.folded") > /dev/null \
  || fail "frame-pointer and libunwind stacks differ: $(diff <(sort "$dir/fp.folded") <(sort "$dir/lu.folded") | head -4)"

# Dropped and incomplete records are counted, never silent.
run drops 0 drops 100
dropped=$(field dropped "$said")
got=$(stat_value "$dir/drops" cupti_dropped_records)
[[ ${got:-0} -eq $dropped && $dropped -gt 0 ]] || fail "drops: stat says ${got:-none}, CUPTI dropped $dropped"
[[ $(stat_value "$dir/drops" incomplete_records) -ge 1 ]] || fail "drops: incomplete record not counted"
grep -q "LOST" "$dir/drops.err" || fail "drops: record's summary does not say what was lost"

# SIGTERM: the handler flushes, the signal still kills the app (exit 128+15).
run signal 143 signal 300
[[ $(count signal kernel) -eq 300 ]] || fail "signal: $(count signal kernel) of 300 kernels after SIGTERM"

# fork: the child records nothing and does not hang; the parent's trace is whole.
run fork 0 fork
[[ $(ls "$dir/fork"/*.gpt | wc -l) -ge 1 ]] || fail "fork: no trace"
# Both children (one exits, one execs and records afresh) are counted in the parent.
[[ $(stat_value "$dir/fork" forked_children_ignored) -eq 2 ]] \
  || fail "fork: forked_children_ignored is '$(stat_value "$dir/fork" forked_children_ignored)', want 2"
# The writer thread's time is measured (it compresses every chunk), not left at 0.
[[ $(stat_value "$dir/basic" compress_ns) -gt 0 ]] || fail "basic: compress_ns was not measured"

# _exit without exit handlers: at most one flush period is lost.
run os_exit 0 os_exit 200 1200
[[ $(count os_exit kernel) -ge 200 ]] || fail "os_exit: $(count os_exit kernel) kernels survived _exit (want >= 200 of the first batch)"

# Another tool holds CUPTI's subscriber slot: activity is still recorded, stacks are not.
run second_subscriber 0 second_subscriber
[[ $(count second_subscriber kernel) -eq $(field kernels "$said") ]] || fail "second_subscriber: kernels lost"
grep -q "already in use" "$dir/second_subscriber.err" || fail "second_subscriber: no one-line explanation"
[[ $(stat_value "$dir/second_subscriber" cupti_subscribe_failed) -eq 1 ]] || fail "second_subscriber: not counted"
finish
