#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test
build=${GPUPERF_BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUPERF_BUILD_TESTS=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
scripts/check-format.sh
scripts/fuzz.sh "${GPUPERF_FUZZ_SECONDS:-30}" "$build"
cd "$build"
ctest --output-on-failure -j"$(nproc)" --timeout 600
