#!/usr/bin/env bash
# Runs one fake_cuda_app scenario alone (the fake without any injection) and under the test
# subscriber, and checks that what the subscriber received through the fake libcupti matches
# what the app generated, plus the scenario's own expectations.
#   scenario_test.sh <scenario>    env: FAKE_APP, FAKE_SUBSCRIBER, FAKE_CUPTI, REAL_CUPTI
set -u
scenario=${1:?scenario}
APP=${FAKE_APP:?}
SUB=${FAKE_SUBSCRIBER:?}
failures=0
fail() { echo "FAIL [$scenario]: $*" >&2; failures=$((failures + 1)); }

# val "<line>" key -> the value of key=value in the line
val() { sed -n "s/.* $2=\([^ ]*\).*/\1/p" <<<" $1" | head -1; }
# line "<output>" prefix [pid] -> the last line starting with prefix (for pid, if given)
line() {
  local pat="^$2"
  [[ -n ${3:-} ]] && pat="^$2 pid=$3 "
  grep -E "$pat" <<<"$1" | tail -1
}
expect_eq() {  # label got want
  [[ "$2" == "$3" ]] || fail "$1: got '$2', want '$3'"
}
expect_ge() {
  [[ -n "$2" && "$2" -ge "$3" ]] || fail "$1: got '$2', want >= $3"
}

out_alone=""
run_alone() {  # the fake by itself: no injection, nothing enabled, nothing delivered
  out_alone=$(env -u CUDA_INJECTION64_PATH "$APP" "$@" 2>&1)
  alone_rc=$?
  local fake; fake=$(line "$out_alone" "fake-cupti:")
  [[ -n $(line "$out_alone" "fake-app:") ]] || fail "alone: no fake-app line"
  if [[ -n $fake ]]; then
    expect_eq "alone callbacks" "$(val "$fake" callbacks)" 0
    expect_eq "alone records_written" "$(val "$fake" records_written)" 0
  fi
}

out=""
run_sub() {  # [ENV=VALUE...] -- args
  local envs=()
  while [[ $# -gt 0 && $1 != "--" ]]; do envs+=("$1"); shift; done
  shift
  out=$(env "${envs[@]}" CUDA_INJECTION64_PATH="$SUB" "$APP" "$@" 2>&1)
  sub_rc=$?
  app=$(line "$out" "fake-app:")
  sub=$(line "$out" "test-subscriber:")
  fake=$(line "$out" "fake-cupti:")
  [[ -n $app && -n $sub ]] || fail "missing output lines: $out"
}

# What every run must show: CUPTI's callback contract held, records parsed back, and the
# subscriber received exactly what the app generated.
check_consistent() {
  for key in order_errors correlation_data_errors dup_correlation bad_records time_errors; do
    expect_eq "$key" "$(val "$sub" $key)" 0
  done
  if [[ $(val "$sub" subscribed) == 1 ]]; then
    expect_eq "api_tid_mismatch" "$(val "$sub" api_tid_mismatch)" 0
    expect_eq "enter" "$(val "$sub" enter)" "$(val "$app" api)"
    expect_eq "exit" "$(val "$sub" exit)" "$(val "$app" api)"
    expect_eq "kernels_matched" "$(val "$sub" kernels_matched)" "$(val "$sub" kernels)"
  fi
  for key in kernels memcpys memsets syncs memory markers runtime_api driver_api; do
    expect_eq "$key" "$(val "$sub" $key)" "$(val "$app" $key)"
  done
  if [[ -n $fake ]]; then
    expect_eq "fake delivered = subscriber records" "$(val "$fake" records_delivered)" \
      "$(val "$sub" records)"
    expect_eq "pending_buffers" "$(val "$fake" pending_buffers)" 0
    expect_eq "late_timestamp_callback" "$(val "$fake" late_timestamp_callback)" 0
  fi
}

case $scenario in
  basic)
    run_alone basic
    expect_eq "alone rc" $alone_rc 0
    run_sub -- basic
    check_consistent
    expect_eq "kernels" "$(val "$app" kernels)" 5
    expect_eq "external" "$(val "$sub" external)" 1
    expect_eq "external_ok" "$(val "$sub" external_ok)" 1
    expect_eq "memcpys_with_runtime_id" "$(val "$sub" memcpys_with_runtime_id)" 2
    expect_eq "devices" "$(val "$sub" devices)" 1
    expect_eq "contexts" "$(val "$sub" contexts)" 1
    expect_eq "contexts_created" "$(val "$sub" contexts_created)" 1
    expect_eq "buffers_on_caller" "$(val "$sub" buffers_on_caller)" 1
    ;;
  threads)
    run_alone threads 2 100
    for mode in per-thread global; do
      envs=(); [[ $mode == global ]] && envs=(TEST_SUBSCRIBER_GLOBAL_BUFFERS=1)
      run_sub "${envs[@]}" -- threads 4 2000
      check_consistent
      expect_eq "$mode kernels" "$(val "$sub" kernels)" 8000
      expect_eq "$mode app_threads" "$(val "$sub" app_threads)" 5
      expect_ge "$mode buffers_on_cupti_thread" "$(val "$sub" buffers_on_cupti_thread)" 1
      expect_eq "$mode buffers_on_app_thread" "$(val "$sub" buffers_on_app_thread)" 0
    done
    ;;
  nested)
    run_alone nested 10
    run_sub -- nested 100
    check_consistent
    expect_eq "driver_api" "$(val "$sub" driver_api)" 100
    expect_eq "runtime_api" "$(val "$sub" runtime_api)" 100
    ;;
  graph)
    run_alone graph
    run_sub -- graph
    check_consistent
    expect_eq "kernels" "$(val "$sub" kernels)" 6
    expect_eq "graph_traces" "$(val "$sub" graph_traces)" 0
    run_sub TEST_SUBSCRIBER_GRAPH_TRACE=1 -- graph
    check_consistent
    expect_eq "graph-trace kernels" "$(val "$sub" kernels)" 0
    expect_eq "graph-trace records" "$(val "$sub" graph_traces)" 2
    ;;
  drops)
    run_alone drops
    run_sub -- drops
    check_consistent
    expect_eq "dropped" "$(val "$sub" dropped)" 7
    expect_eq "incomplete" "$(val "$sub" incomplete)" 1
    expect_eq "fake incomplete_delivered" "$(val "$fake" incomplete_delivered)" 1
    # The client declines buffers after the first: CUPTI drops and counts.
    run_sub TEST_SUBSCRIBER_REFUSE_AFTER=1 TEST_SUBSCRIBER_BUFFER=4096 -- drops 200
    expect_ge "refused_buffers" "$(val "$sub" refused_buffers)" 1
    expect_eq "dropped = fake dropped" "$(val "$sub" dropped)" "$(val "$fake" records_dropped)"
    expect_eq "records = fake delivered" "$(val "$sub" records)" "$(val "$fake" records_delivered)"
    expect_ge "dropped" "$(val "$sub" dropped)" 100
    ;;
  exit_flush)
    run_alone exit_flush
    run_sub -- exit_flush 500
    check_consistent
    expect_eq "kernels" "$(val "$sub" kernels)" 500
    expect_ge "flush_all" "$(val "$fake" flush_all)" 1
    ;;
  signal)
    run_alone signal
    expect_eq "alone rc (killed by SIGTERM)" $alone_rc 143
    run_sub TEST_SUBSCRIBER_SIGNAL=1 -- signal 300
    expect_eq "rc (re-raised SIGTERM)" $sub_rc 143
    check_consistent
    expect_eq "kernels" "$(val "$sub" kernels)" 300
    ;;
  fork)
    run_alone fork
    expect_eq "alone rc" $alone_rc 0
    run_sub -- fork
    expect_eq "rc" $sub_rc 0
    parent=$(grep -E '^fake-app: .*scenario=fork ' <<<"$out" | sed -n 's/.*pid=\([0-9]*\).*/\1/p')
    child=$(grep -E '^fake-app: .*scenario=fork-child ' <<<"$out" | sed -n 's/.*pid=\([0-9]*\).*/\1/p')
    execd=$(grep -E '^fake-app: .*scenario=basic ' <<<"$out" | sed -n 's/.*pid=\([0-9]*\).*/\1/p')
    [[ -n $parent && -n $child && -n $execd ]] || fail "missing process lines: $out"
    app=$(line "$out" "fake-app:" "$parent"); sub=$(line "$out" "test-subscriber:" "$parent")
    fake=$(line "$out" "fake-cupti:" "$parent")
    check_consistent
    expect_eq "parent kernels" "$(val "$sub" kernels)" 100
    grep -q "test-subscriber: pid=$child forked child, not flushing" <<<"$out" ||
      fail "the plain child flushed"
    expect_eq "child deliveries" "$(val "$(line "$out" "fake-cupti:" "$child")" buffers_completed)" 0
    app=$(line "$out" "fake-app:" "$execd"); sub=$(line "$out" "test-subscriber:" "$execd")
    fake=$(line "$out" "fake-cupti:" "$execd")
    check_consistent
    expect_eq "exec'd child kernels" "$(val "$sub" kernels)" 5
    ;;
  second_subscriber)
    run_alone second_subscriber
    run_sub -- second_subscriber
    check_consistent
    expect_eq "subscribed" "$(val "$sub" subscribed)" 0
    expect_eq "enter" "$(val "$sub" enter)" 0
    [[ $sub == *"CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; held by CUPTI for Nsight Systems"* ]] ||
      fail "subscribe error not reported: $sub"
    expect_eq "kernels still traced" "$(val "$sub" kernels)" 5
    expect_eq "fake subscribe_rejected" "$(val "$fake" subscribe_rejected)" 1
    ;;
  device_reset)
    run_alone device_reset
    run_sub -- device_reset
    check_consistent
    expect_eq "kernels" "$(val "$sub" kernels)" 10
    expect_eq "contexts_created" "$(val "$sub" contexts_created)" 2
    expect_eq "contexts_destroyed" "$(val "$sub" contexts_destroyed)" 1
    expect_eq "context records" "$(val "$sub" contexts)" 2
    ;;
  os_exit)
    run_alone os_exit 100 50
    # _exit: no exit handler runs; what the periodic flushes delivered is all that is left.
    run_sub TEST_SUBSCRIBER_PERIODIC_FLUSH_MS=100 -- os_exit 1000 600
    settled=$(sed -n 's/.*settled_launches=\([0-9]*\).*/\1/p' <<<"$out")
    expect_ge "kernels delivered before _exit" "$(val "$sub" kernels)" "$settled"
    [[ -z $fake ]] || fail "_exit ran the exit handlers"
    ;;
  nvtx)
    run_alone nvtx
    run_sub -- nvtx
    check_consistent
    expect_eq "markers" "$(val "$sub" markers)" 15
    ;;
  many)
    run_sub -- many 200000
    check_consistent
    expect_eq "kernels" "$(val "$sub" kernels)" 200000
    expect_eq "dropped" "$(val "$sub" dropped)" 0
    ;;
  flush_period)
    # Full buffers leave on CUPTI's worker thread at each tick; whatever is left at exit
    # (full buffers waiting for the next tick, the partly filled one) leaves through
    # cuptiActivityFlushAll on the caller's thread. Never on an app thread otherwise.
    # 200,000 launches take ~200 ms, ten ticks: with 20,000 (~23 ms, one tick at 20 ms) a
    # loaded CI machine sometimes ran the whole program before the worker's first tick.
    run_sub TEST_SUBSCRIBER_FLUSH_PERIOD=20 -- many 200000
    check_consistent
    expect_ge "buffers_on_cupti_thread" "$(val "$sub" buffers_on_cupti_thread)" 1
    expect_ge "buffers_on_caller" "$(val "$sub" buffers_on_caller)" 1
    expect_eq "all buffers accounted" \
      $(($(val "$sub" buffers_on_cupti_thread) + $(val "$sub" buffers_on_caller))) \
      "$(val "$sub" buffers)"
    expect_eq "buffers_on_app_thread" "$(val "$sub" buffers_on_app_thread)" 0
    expect_eq "fake buffers_on_worker" "$(val "$fake" buffers_on_worker)" \
      "$(val "$sub" buffers_on_cupti_thread)"
    ;;
  exports)
    # The fake must look like the real library to the dynamic linker: same SONAME, CUPTI
    # names under the libcupti.so.13 version node, nothing exported that the real one lacks.
    FAKE=${FAKE_CUPTI:?}
    readelf -d "$FAKE" | grep -q 'SONAME.*\[libcupti.so.13\]' || fail "SONAME is not libcupti.so.13"
    fake_syms=$(nm -D --defined-only "$FAKE" | awk '{print $3}' | grep -v -E '^(FAKE_CUPTI_1|libcupti.so.13)$')
    extra=$(grep -v -E '^(cupti[A-Za-z_0-9]*@@libcupti\.so\.13|fake_cupti_[a-z_0-9]*@@FAKE_CUPTI_1)$' <<<"$fake_syms")
    [[ -z $extra ]] || fail "unexpected exports: $extra"
    if [[ -f ${REAL_CUPTI:-} ]]; then
      real_syms=$(nm -D --defined-only "$REAL_CUPTI" | awk '{print $3}')
      missing=$(comm -23 <(grep '^cupti' <<<"$fake_syms" | sort) <(sort <<<"$real_syms"))
      [[ -z $missing ]] || fail "exported by the fake but not by the real libcupti: $missing"
    else
      echo "no real libcupti at '${REAL_CUPTI:-}': name check against it skipped"
    fi
    ;;
  *)
    echo "unknown scenario $scenario" >&2
    exit 2
    ;;
esac

if [[ $failures -gt 0 ]]; then
  echo "--- output of the last run ---" >&2
  echo "$out" | cut -c1-400 >&2
  exit 1
fi
echo "ok: $scenario"
