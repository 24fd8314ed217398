# Helpers for the end-to-end CLI tests (sourced). Each expect_* records a failure and
# goes on, so one run shows every problem; finish exits 1 if any expectation failed.
set -u
GPUPERF=${GPUPERF_BIN:?GPUPERF_BIN must point at the gpuperf binary}
SYNTH=${GPUPERF_BINARY_DIR:?}/bench/gpuperf_synth
SRC=${GPUPERF_SOURCE_DIR:?}
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

expect_exit() {
  local want=$1; shift
  "$@" >/dev/null 2>&1
  local got=$?
  [[ $got -eq $want ]] || fail "exit $got (want $want): $*"
}

expect_output_contains() {
  local needle=$1; shift
  local out; out=$("$@" 2>/dev/null)
  [[ $out == *"$needle"* ]] || fail "stdout of '$*' lacks '$needle'"
}

expect_stderr_contains() {
  local needle=$1; shift
  local err; err=$("$@" 2>&1 >/dev/null)
  [[ $err == *"$needle"* ]] || fail "stderr of '$*' lacks '$needle' (got: $err)"
}

# stat_value RECORDING NAME: stat NAME's last value in the recording's dump, or nothing when it
# never counted.
stat_value() { "$GPUPERF" dump "$1" 2>/dev/null | grep "# $2\$" | tail -1 | sed 's/.*value=\([0-9]*\).*/\1/'; }

# decode_perfetto TRACE OUT: TRACE's packets, its zstd bundles opened, as protoc's text
# (against tests/proto/perfetto_min.proto) in OUT; fails when either step fails.
decode_perfetto() {
  python3 "$SRC/tests/tools/perfetto_unpack.py" "$1" "$2.pb" &&
    protoc --decode=perfetto.protos.Trace -I "$SRC/tests/proto" "$SRC/tests/proto/perfetto_min.proto" \
      < "$2.pb" > "$2"
}

# loss_totals summary|report: "STAT TOTAL" lines, sorted, of the losses named in record's
# summary (its LOST lines) or in report's text (its LOST rows, one per process), from stdin.
loss_totals() {
  awk -v kind="$1" '
    kind == "summary" { if (/^  LOST      /) inside = 1; else if (!/^            [^ ]/) inside = 0 }
    (kind == "summary" && inside) || (kind == "report" && /^  LOST /) {
      line = $0
      if (kind == "report") sub(/^  LOST (pid [0-9]+: )?/, "", line)
      if (!match(line, /\[[a-z0-9_]+\]$/)) { print "unnamed loss: " line; next }
      stat = substr(line, RSTART + 1, RLENGTH - 2)
      if (!match(line, /[0-9][0-9,]*/)) { print "loss without a count: " line; next }
      value = substr(line, RSTART, RLENGTH); gsub(",", "", value)
      total[stat] += value
    }
    END { for (s in total) print s, total[s] }' | sort
}

# check_loss_agrees PATH: record's summary of the recording PATH (a directory or a file) and
# `gpuperf report` name the same losses with the same totals: both read the same facts
# (analyze/data_loss.h), so neither can say "lost nothing" while the other shows a loss.
SUMMARY_OF=$GPUPERF_BINARY_DIR/tests/gpuperf_record_summary
check_loss_agrees() {
  local summary report summary_rc report_rc
  summary=$("$SUMMARY_OF" "$1" 2>/dev/null); summary_rc=$?
  report=$(timeout 120 "$GPUPERF" report -s loss "$1" 2>/dev/null); report_rc=$?
  if [[ $summary_rc -ne 0 || $report_rc -ne 0 ]]; then
    [[ $summary_rc -ne 0 && $report_rc -ne 0 ]] ||
      fail "$1: record's summary exits $summary_rc, report $report_rc"
    return
  fi
  local in_summary in_report
  in_summary=$(loss_totals summary <<< "$summary")
  in_report=$(loss_totals report <<< "$report")
  [[ $in_summary == "$in_report" ]] ||
    fail "$1: record's summary and report disagree on loss: summary [${in_summary//$'\n'/; }], report [${in_report//$'\n'/; }]"
}

# Every recording a test leaves in $dir (each directory holding *.gpt files): record's summary
# and report agree on its loss.
check_loss_of_recordings() {
  [[ -n ${dir:-} && -d ${dir:-} && -x $SUMMARY_OF ]] || return 0
  local recording
  while IFS= read -r recording; do
    check_loss_agrees "$recording"
  done < <(find "$dir" -name '*.gpt' -type f -printf '%h\n' 2>/dev/null | sort -u)
}

finish() {
  check_loss_of_recordings
  if [[ $failures -gt 0 ]]; then
    echo "$failures expectation(s) failed" >&2
    exit 1
  fi
  echo "ok"
}

# For tests of Python frames in the CPU profiler: sets lib (the injection library) and py
# (python3's interpreter itself, not a launcher script: pyenv's shims run several
# processes), or skips the test without root, the library or a CPython 3.10 to 3.14.
require_cpu_python() {
  lib=$GPUPERF_BINARY_DIR/src/inject/libgpuperf_inject.so
  [[ -f $lib ]] || { echo "SKIP: no injection library in this build"; exit 77; }
  if [[ $(id -u) -ne 0 ]]; then echo "SKIP: the CPU profiler needs root here"; exit 77; fi
  py=$(python3 -c 'import sys; print(sys.executable if (3, 10) <= sys.version_info[:2] <= (3, 14) else "")' 2>/dev/null)
  [[ -n $py ]] || { echo "SKIP: no CPython 3.10 to 3.14 as python3"; exit 77; }
}

# For the tests that record the fake CUDA app (tests/fakes): sets bin, lib (the injection
# library), app (the fake app; `use_fake_app nofp` for its build without frame pointers) and
# dir (a new directory, removed at exit), or skips the test where this build has neither.
use_fake_app() {
  bin=$GPUPERF_BINARY_DIR
  lib=$bin/src/inject/libgpuperf_inject.so
  app=$bin/tests/fakes/fake_cuda_app${1:+_$1}
  [[ -x $app && -f $lib ]] || { echo "skip: no injection library or fake app in this build"; exit 77; }
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
}

# For the tests of the live view (tests/e2e/live_*_test.sh): sets lib, app and holder (the
# injection library, the fake app and tests/live/live_page_holder), work (a new directory) and
# pids (processes to end at exit), or skips the test where this build lacks them or one of
# TOOLS (use_live_app TOOLS...). At exit: $work/release and $work/stop are made (so that the
# fake app and hold_connections.py end), live_at_exit (when defined) runs, the processes in
# pids get SIGTERM and are waited for, and $work is removed. GPUPERF_LIVE_DIR is $work/live:
# no other test's pages.
use_live_app() {
  lib=$GPUPERF_BINARY_DIR/src/inject/libgpuperf_inject.so
  app=$GPUPERF_BINARY_DIR/tests/fakes/fake_cuda_app
  holder=$GPUPERF_BINARY_DIR/tests/live_page_holder
  [[ -x $app && -f $lib && -x $holder ]] || { echo "skip: no injection library, fake app or page holder"; exit 77; }
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "skip: no $tool (scripts/install-deps.sh --test)"; exit 77; }
  done
  work=$(mktemp -d)
  pids=()
  export GPUPERF_LIVE_DIR=$work/live
  trap live_cleanup EXIT
}
live_cleanup() {
  touch "$work/release" "$work/stop" 2>/dev/null
  declare -F live_at_exit >/dev/null && live_at_exit
  local pid
  # TERM lets `record` see its program out (no half-written trace under $work); CONT ends one
  # that is stopped.
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; kill -CONT "$pid" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}

# field NAME LINE: the number after " NAME=" in LINE (the fake app's "fake-app: ..." lines).
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<< "$2"; }

# wait_until COMMAND...: runs COMMAND until it succeeds, 30 s at most; false if it never did.
wait_until() {
  local _
  for _ in $(seq 300); do "$@" && return 0; sleep 0.1; done
  return 1
}

# record_live_app DIR LAUNCHES [RUNNER...]: records `fake_cuda_app live LAUNCHES` into DIR,
# through RUNNER when given (`env RANK=3`, `setpriv ...`), holding until $work/release exists;
# waits for its workload and sets app_pid, kernels, counts and totals (its "fake-app: pid=" and
# "fake-app: live" lines); its output is in $work/app.out and $work/app.err. False if it never
# ran.
record_live_app() {
  local out=$1 launches=$2
  shift 2
  "$@" "$GPUPERF" record -o "$out" --inject-lib "$lib" -- env FAKE_APP_RELEASE="$work/release" \
    "$app" live "$launches" 600000 > "$work/app.out" 2> "$work/app.err" &
  pids+=($!)
  record_pid=$!
  wait_until grep -qs '^fake-app: live ' "$work/app.out" || { fail "the app never ran: $(cat "$work/app.err")"; return 1; }
  counts=$(grep '^fake-app: pid=' "$work/app.out")
  totals=$(grep '^fake-app: live ' "$work/app.out")
  app_pid=$(field pid "$counts")
  kernels=$(field kernels "$counts")
}

# start_serve: `gpuperf serve` on a free loopback port, logging to $work/serve.err; sets
# serve_pid and port. False if it did not start.
start_serve() {
  "$GPUPERF" serve --listen 127.0.0.1:0 2> "$work/serve.err" &
  serve_pid=$!
  pids+=("$serve_pid")
  wait_until grep -qs "metrics at" "$work/serve.err" || { fail "serve did not start: $(cat "$work/serve.err")"; return 1; }
  port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$work/serve.err")
}
