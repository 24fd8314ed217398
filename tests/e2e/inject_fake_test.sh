#!/usr/bin/env bash
# The real injection library inside a CUDA "application" driven by the fake libcupti
# (tests/fakes): every scenario's kernels are recorded or counted as lost, stacks are
# joined, exit/signal/fork/_exit paths flush, a second subscriber degrades gracefully.
source "$(dirname "$0")/lib.sh"
bin=$GPUPERF_BINARY_DIR
lib=$bin/src/inject/libgpuperf_inject.so
app=$bin/tests/fakes/fake_cuda_app
[[ -x $app && -f $lib ]] || { echo "skip: no injection library or fake app in this build"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

# run NAME EXPECTED_EXIT SCENARIO ARGS...: records; leaves the app's line in $said.
run() {
  local name=$1 want_rc=$2; shift 2
  rm -rf "$dir/$name"
  "$GPUPERF" record -o "$dir/$name" --inject-lib "$lib" -- "$app" "$@" > "$dir/$name.out" 2> "$dir/$name.err"
  local rc=$?
  [[ $rc -eq $want_rc ]] || fail "$name: exit $rc, want $want_rc ($(tail -2 "$dir/$name.err"))"
  said=$(grep -h '^fake-app:' "$dir/$name.out" "$dir/$name.err" | grep -v 'fork-child' | head -1)
}
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<< "$2"; }
count() { "$GPUPERF" dump "$dir/$1" 2>/dev/null | grep -c "^$2 "; }
stat_value() { "$GPUPERF" dump "$dir/$1" 2>/dev/null | grep "# $2\$" | tail -1 | sed 's/.*value=\([0-9]*\).*/\1/'; }

for scenario in "basic" "threads 4 2000" "nested 200" "graph" "exit_flush 500" "nvtx" "device_reset" "many 100000"; do
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

# Dropped and incomplete records are counted, never silent.
run drops 0 drops 100
dropped=$(field dropped "$said")
got=$(stat_value drops cupti_dropped_records)
[[ ${got:-0} -eq $dropped && $dropped -gt 0 ]] || fail "drops: stat says ${got:-none}, CUPTI dropped $dropped"
[[ $(stat_value drops incomplete_records) -ge 1 ]] || fail "drops: incomplete record not counted"
grep -q "LOST" "$dir/drops.err" || fail "drops: record's summary does not say what was lost"

# SIGTERM: the handler flushes, the signal still kills the app (exit 128+15).
run signal 143 signal 300
[[ $(count signal kernel) -eq 300 ]] || fail "signal: $(count signal kernel) of 300 kernels after SIGTERM"

# fork: the child records nothing and does not hang; the parent's trace is whole.
run fork 0 fork
[[ $(ls "$dir/fork"/*.gpt | wc -l) -ge 1 ]] || fail "fork: no trace"

# _exit without exit handlers: at most one flush period is lost.
run os_exit 0 os_exit 200 1200
[[ $(count os_exit kernel) -ge 200 ]] || fail "os_exit: $(count os_exit kernel) kernels survived _exit (want >= 200 of the first batch)"

# Another tool holds CUPTI's subscriber slot: activity is still recorded, stacks are not.
run second_subscriber 0 second_subscriber
[[ $(count second_subscriber kernel) -eq $(field kernels "$said") ]] || fail "second_subscriber: kernels lost"
grep -q "already in use" "$dir/second_subscriber.err" || fail "second_subscriber: no one-line explanation"
[[ $(stat_value second_subscriber cupti_subscribe_failed) -eq 1 ]] || fail "second_subscriber: not counted"
finish
