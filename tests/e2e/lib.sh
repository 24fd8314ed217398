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

finish() {
  if [[ $failures -gt 0 ]]; then
    echo "$failures expectation(s) failed" >&2
    exit 1
  fi
  echo "ok"
}
