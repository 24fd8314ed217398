# Helpers for gpuperf attach's tests (sourced after lib.sh): the fake CUDA app's attach_target
# scenario (tests/fakes/fake_app.cc), started without gpuperf and driven phase by phase. After
# phase K it makes $dir/NAME.go/done-K and waits for go-K, so a test attaches, detaches and
# checks between phases, and knows exactly what each phase launched.

# use_attach_app: sets what use_fake_app sets, and libcuda (the fake libcuda.so.1 the app maps
# so that it looks like a CUDA program); skips without them. At exit every job still running
# is ended and $dir removed.
use_attach_app() {
  use_fake_app
  libcuda=$bin/tests/fakes/fake_libcuda/libcuda.so.1
  [[ -f $libcuda ]] || { echo "skip: no fake libcuda.so.1 in this build"; exit 77; }
  trap attach_cleanup EXIT
}
attach_cleanup() {
  local job
  for job in $(jobs -p); do kill -KILL "$job" 2>/dev/null; done
  wait 2>/dev/null
  [[ -n ${GPUPERF_KEEP_TEST_DIR:-} ]] || rm -rf "$dir"
}

# wait_file FILE: until it exists (60 s at most).
wait_file() {
  local i
  for ((i = 0; i < 3000; i++)); do [[ -e $1 ]] && return 0; sleep 0.02; done
  fail "gave up waiting for $1"
  return 1
}
# wait_line FILE TEXT: until a line of FILE holds TEXT (60 s at most).
wait_line() {
  local i
  for ((i = 0; i < 3000; i++)); do grep -qF -- "$2" "$1" 2>/dev/null && return 0; sleep 0.02; done
  fail "gave up waiting for '$2' in $1: $(tail -3 "$1" 2>/dev/null)"
  return 1
}

# start_app NAME PHASE...: the app in the background ($dir/NAME.out, .err), with the
# variables in the array app_env; sets app_pid once its first phase is done. With
# app_orphan=1 it is no child of this shell (a test that kills it reaps nothing, and the
# shell prints no "Killed" line): there is no exit status to wait for then.
start_app() {
  local name=$1
  shift
  mkdir -p "$dir/$name.go"
  if [[ ${app_orphan:-0} == 1 ]]; then
    (env FAKE_APP_LIBCUDA="$libcuda" FAKE_APP_GO_DIR="$dir/$name.go" "${app_env[@]}" \
      "$app" attach_target "$@" > "$dir/$name.out" 2> "$dir/$name.err" &
     echo $! > "$dir/$name.pid")
    app_pid=$(cat "$dir/$name.pid")
  else
    env FAKE_APP_LIBCUDA="$libcuda" FAKE_APP_GO_DIR="$dir/$name.go" "${app_env[@]}" \
      "$app" attach_target "$@" > "$dir/$name.out" 2> "$dir/$name.err" &
    app_pid=$!
  fi
  wait_file "$dir/$name.go/done-1"
}
# go NAME K: lets the app past phase K and waits until phase K+1 is done.
go() {
  touch "$dir/$1.go/go-$2"
  wait_file "$dir/$1.go/done-$(($2 + 1))"
}
# finish_app NAME PID LAST: lets the app past every phase up to LAST, its last, and sets
# app_rc.
finish_app() {
  local k
  for ((k = 1; k <= $3; k++)); do touch "$dir/$1.go/go-$k"; done
  wait "$2"
  app_rc=$?
}
# app_lines NAME: the app's own output (its fake-app lines, without the pid).
app_lines() { grep '^fake-app:' "$dir/$1.out" | sed 's/ pid=[0-9]*//'; }
# cupti_line NAME K: the fake CUPTI's line for phase K.
cupti_line() { grep "^fake-cupti: phase $2 " "$dir/$1.out"; }
# phase_line NAME K: the app's line for phase K.
phase_line() { grep "^fake-app: phase $2 done" "$dir/$1.out"; }

# attach_start OUT PID [OPTION...]: gpuperf attach in the background into OUT (its output in
# OUT.log); waits until it records. attach_end: Ctrl-C, and sets attach_rc.
attach_start() {
  local out=$1 pid=$2
  shift 2
  "$GPUPERF" attach "$pid" -o "$out" --inject-lib "$lib" "$@" > "$out.log" 2>&1 &
  attach_job=$!
  wait_line "$out.log" "recording"
}
attach_end() {
  kill -INT "$attach_job"
  wait "$attach_job"
  attach_rc=$?
}

# count TRACE KIND: records of KIND in TRACE; kernels_named TRACE NAME: kernels of that name.
count() { "$GPUPERF" dump "$1" 2>/dev/null | grep -c "^$2 "; }
kernels_named() { "$GPUPERF" dump "$1" 2>/dev/null | grep -c "^kernel .*name=\"$2\""; }
# kernel_names TRACE: "count name" of each kernel name, on one line.
kernel_names() {
  "$GPUPERF" dump "$1" | sed -n 's/^kernel .*name="\([^"]*\)".*/\1/p' | sort | uniq -c |
    awk '{print $1, $2}' | tr '\n' ' '
}
# unlinked TRACE: launch links without a stack.
unlinked() { "$GPUPERF" dump "$1" 2>/dev/null | grep '^launch_link ' | grep -c ' stack_id=0 '; }
# unjoined DUMP: kernels whose correlation id has no launch link with a stack, in DUMP (the
# text of `gpuperf dump`).
unjoined() {
  awk '
    { id = ""; stack = ""
      for (i = 2; i <= NF; i++) {
        if ($i ~ /^correlation_id=/) id = substr($i, 16)
        if ($i ~ /^stack_id=/) stack = substr($i, 10)
      } }
    $1 == "launch_link" && stack != "0" { linked[id] = 1 }
    $1 == "kernel" { kernels[id] = 1 }
    END { n = 0; for (id in kernels) if (!(id in linked)) n++; print n }' "$1"
}
# trace_bytes DIR: the size of the trace files in DIR.
trace_bytes() { cat "$1"/*.gpt 2>/dev/null | wc -c; }
