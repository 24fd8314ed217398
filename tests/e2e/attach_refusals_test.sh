#!/usr/bin/env bash
# Every process gpuperf attach must refuse gets one line that says why and what to do, exit
# status 1, and is left as it was (docs/attach.md, "Refusals"): its own output and exit
# status, no library of ours in it, CUPTI untouched:
#   - no such process; a process without libcuda; one `gpuperf record` records already (the
#     line points at dump-now); one where another CUPTI client holds CUPTI (its client keeps
#     it: not finalized, twice); one whose attach window is open already; a static program
#     (no dlopen to call); several PIDs, one of them refused: none is touched;
#   - ptrace not permitted: another user's process, kernel.yama.ptrace_scope (set and
#     restored where this kernel has Yama), a process without CAP_SYS_PTRACE; a process in
#     another mount namespace (a container: its paths are not ours).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/attach_lib.sh"
use_attach_app
app_env=()

# refused NAME PATTERN COMMAND...: COMMAND exits 1 with one line, "gpuperf: error: ..."
# holding PATTERN. (A command line without a PID is a usage error: exit 2.)
refused() {
  local name=$1 pattern=$2
  shift 2
  "$@" > "$dir/$name.refusal" 2>&1
  local rc=$?
  [[ $rc -eq 1 ]] || fail "$name: exit $rc, want 1: $(cat "$dir/$name.refusal")"
  [[ $(wc -l < "$dir/$name.refusal") -eq 1 ]] || fail "$name: not one line: $(cat "$dir/$name.refusal")"
  grep -q "^gpuperf: error: .*$pattern" "$dir/$name.refusal" ||
    fail "$name: the line lacks '$pattern': $(cat "$dir/$name.refusal")"
}
attach() { "$GPUPERF" attach --inject-lib "$lib" -o "$dir/out-$RANDOM" "$@"; }
# untouched NAME PID LAST: the app, let past its last phase, did what it does alone, with
# no library of ours loaded and CUPTI never called.
untouched() {
  local name=$1 pid=$2 last=$3
  grep -q libgpuperf_inject "/proc/$pid/maps" && fail "$name: gpuperf's library is loaded in it"
  finish_app "$name" "$pid" "$last"
  [[ $app_rc -eq 5 ]] || fail "$name: the app exited $app_rc, want 5"
  [[ $(grep -c '^fake-app: phase .* done' "$dir/$name.out") -eq $last ]] || fail "$name: $(cat "$dir/$name.out")"
  grep '^fake-cupti: phase' "$dir/$name.out" | grep -qv 'callbacks=0 records=0 subscribed=0 kinds_enabled=0 finalized=0' &&
    fail "$name: CUPTI was used: $(grep '^fake-cupti: phase' "$dir/$name.out")"
  [[ ! -s $dir/$name.err ]] || fail "$name: the app wrote to its stderr: $(cat "$dir/$name.err")"
}

refused no_such 'no process 999999999 is running' attach 999999999
expect_exit 2 attach
expect_stderr_contains 'give a PID' attach

# ---- no libcuda ----
app_env=(FAKE_APP_LIBCUDA=)
start_app nocuda 3 3
refused nocuda 'has not loaded libcuda' attach "$app_pid"
untouched nocuda "$app_pid" 2
app_env=()

# ---- several PIDs, one refused: none is touched ----
start_app fine 3 3
fine=$app_pid
app_env=(FAKE_APP_LIBCUDA=)
start_app plain 3 3
plain=$app_pid
app_env=()
refused several "process $plain: .*has not loaded libcuda" attach "$fine" "$plain"
untouched fine "$fine" 2
untouched plain "$plain" 2

# ---- recorded by gpuperf record already ----
mkdir -p "$dir/rec.go"
FAKE_APP_LIBCUDA="$libcuda" FAKE_APP_GO_DIR="$dir/rec.go" \
  "$GPUPERF" record -o "$dir/rec" --inject-lib "$lib" -- "$app" attach_target 4 6 > "$dir/rec.out" 2>&1 &
record_job=$!
wait_file "$dir/rec.go/done-1"
rec_pid=$(sed -n 's/^fake-app: phase 1 done.* pid=\([0-9]*\).*/\1/p' "$dir/rec.out")
refused recorded "already recorded by gpuperf record.*gpuperf dump-now $rec_pid" attach "$rec_pid"
touch "$dir/rec.go/go-1" "$dir/rec.go/go-2"
wait "$record_job"
rc=$?
[[ $rc -eq 5 ]] || fail "recorded: record exited $rc, want the app's 5"
[[ $(kernel_names "$dir/rec") == "4 _Z6phase1v 6 _Z6phase2v " ]] || fail "recorded: record's trace: $(kernel_names "$dir/rec")"

# ---- another CUPTI client holds CUPTI: refused, twice, and that client keeps CUPTI ----
app_env=(FAKE_APP_OTHER_SUBSCRIBER=Kineto)
start_app kineto 3 3 3
refused kineto1 "another CUPTI client holds CUPTI in process $app_pid .*Kineto" attach "$app_pid"
go kineto 1
refused kineto2 "another CUPTI client holds CUPTI in process $app_pid .*Kineto" attach "$app_pid"
go kineto 2
finish_app kineto "$app_pid" 3
[[ $app_rc -eq 5 ]] || fail "kineto: the app exited $app_rc, want 5"
for k in 1 2 3; do
  [[ $(cupti_line kineto "$k") == *"callbacks=0 records=0 subscribed=0 kinds_enabled=0 finalized=0 "* ]] ||
    fail "kineto: gpuperf touched the other client's CUPTI: $(cupti_line kineto "$k")"
done
[[ ! -s $dir/kineto.err ]] || fail "kineto: the app wrote to its stderr: $(cat "$dir/kineto.err")"
app_env=()

# ---- a window open already ----
start_app twice 3 7 3
attach_start "$dir/first" "$app_pid"
refused window_open "already has an attach window open" attach "$app_pid"
go twice 1
attach_end
[[ $attach_rc -eq 0 && $(kernel_names "$dir/first") == "7 _Z6phase2v " ]] ||
  fail "window_open: the first window: exit $attach_rc, $(kernel_names "$dir/first")"
finish_app twice "$app_pid" 3
[[ $app_rc -eq 5 ]] || fail "twice: the app exited $app_rc"

# ---- a static program: no dlopen ----
holder=$bin/tests/fakes/static_cuda_holder
if [[ -x $holder ]]; then
  "$holder" "$libcuda" "$dir/holder.ready" &
  holder_pid=$!
  wait_file "$dir/holder.ready"
  refused static "no dlopen is reachable" attach "$holder_pid"
  kill -0 "$holder_pid" 2>/dev/null || fail "static: the program died"
  kill "$holder_pid"
else
  echo "note: no static_cuda_holder in this build (no static libc): the no-dlopen case is not run"
fi

# ---- ptrace not permitted ----
if [[ $(id -u) -eq 0 ]]; then
  start_app rootapp 3 3
  root_app=$app_pid
  nobody=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --inh-caps=-all)
  chmod 755 "$dir"
  if "${nobody[@]}" test -x "$GPUPERF" -a -x "$app" -a -r "$libcuda" -a -r "$lib"; then
    refused other_user "belongs to root: run gpuperf attach as root" "${nobody[@]}" "$GPUPERF" attach "$root_app"
  else
    echo "note: nobody cannot run the build's programs (a directory only root can read): the other-user and Yama cases are not run"
    nobody=()
  fi
  refused no_cap "lacks CAP_SYS_PTRACE" \
    setpriv --inh-caps=-sys_ptrace --bounding-set=-sys_ptrace "$GPUPERF" attach "$root_app"
  untouched rootapp "$root_app" 2
  if unshare --mount true 2>/dev/null; then
    app_env=(unshare --mount)  # env runs it: `env VARS unshare --mount APP ...`
    start_app container 3 3
    refused container "runs in another mount namespace" attach "$app_pid"
    untouched container "$app_pid" 2
    app_env=()
  else
    echo "note: unshare --mount is not allowed here: the other-mount-namespace case is not run"
  fi
  scope_file=/proc/sys/kernel/yama/ptrace_scope
  if [[ -w $scope_file && ${#nobody[@]} -gt 0 ]]; then
    scope_was=$(cat "$scope_file")
    trap 'echo "$scope_was" > '"$scope_file"'; attach_cleanup' EXIT
    echo 1 > "$scope_file"
    shared=$dir/nobody
    mkdir -p "$shared/app.go" && chmod -R 777 "$shared"
    "${nobody[@]}" env FAKE_APP_LIBCUDA="$libcuda" \
      FAKE_APP_GO_DIR="$shared/app.go" "$app" attach_target 3 3 > "$shared/app.out" 2>&1 &
    nobody_app=$!
    wait_file "$shared/app.go/done-1"
    refused yama "kernel.yama.ptrace_scope is 1" \
      "${nobody[@]}" "$GPUPERF" attach "$nobody_app"
    echo "$scope_was" > "$scope_file"
    touch "$shared/app.go/go-1" "$shared/app.go/go-2"
    wait "$nobody_app"
    [[ $? -eq 5 ]] || fail "yama: the app exited otherwise than 5"
  else
    echo "note: no writable $scope_file (no Yama in this kernel), or no user to run as: the ptrace_scope case is not run"
  fi
else
  echo "note: not root: the other-user, capability and Yama cases are not run"
fi

finish
