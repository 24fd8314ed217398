#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (what CI runs).
# Usage: scripts/test.sh [--stress]
#   --stress (or GPUPERF_TEST_STRESS=1): keeps every core busy with a load generator for the
#   whole run, build included, so a test that depends on the machine's speed fails here
#   rather than on a busy CI machine (docs/testing.md, "Load").
set -euo pipefail
cd "$(dirname "$0")/.."
stress=${GPUPERF_TEST_STRESS:-0}
[[ ${1:-} == --stress ]] && stress=1
scripts/install-deps.sh --test
started=$SECONDS
if [[ $stress == 1 ]]; then
  load_pids=()
  for _ in $(seq "$(nproc)"); do
    # A busy loop per core, at the tests' own priority: they compete for every cycle.
    bash -c 'while :; do :; done' &
    load_pids+=($!)
  done
  trap 'kill "${load_pids[@]}" 2>/dev/null' EXIT
  echo "test: stress mode: ${#load_pids[@]} busy loops on $(nproc) cores for the whole run"
fi
build=${GPUPERF_BUILD_DIR:-build}
# Unity batches, as the quick start builds (less than half the compiler time); developers'
# own builds (without) keep the other configuration compiling.
# Ninja where the build directory is new (one keeps the generator it was made with).
generator=(); [[ -f $build/CMakeCache.txt ]] || generator=(-G Ninja)
cmake "${generator[@]}" -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DGPUPERF_BUILD_TESTS=ON -DGPUPERF_UNITY_BUILD=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
built=$SECONDS
scripts/check-format.sh
scripts/fuzz.sh "${GPUPERF_FUZZ_SECONDS:-30}" "$build"
status=0
(cd "$build" && ctest --output-on-failure -j"$(nproc)" --timeout 600) || status=$?
# The Parquet export read by real engines (npm packages) says here that it ran, or why not.
grep -h '^parquet check:' "$build/Testing/Temporary/LastTest.log" ||
  echo "test: the Parquet export's reader check (e2e.parquet_export_test) did not run"
echo "test: build $((built - started)) s, checks and tests $((SECONDS - built)) s"
exit $status
