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

finish() {
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
