#!/usr/bin/env bash
# Stages what the GPU machine needs into DIR (default .carry): bin/ with the gpuperf CLI, the
# injection and preload libraries, libunwind.so.8, the CUPTI floor/probe tracers and the CPU
# profiler's cpu_switchy benchmark, all stripped
# of debug info to fit the device tool's 64 MiB carry limit; examples/ built by examples/build.sh
# (skipped when present, pass --examples to rebuild). Then, on the GPU machine:
#   bash tests/gpu/run.sh DIR/bin DIR/examples
# usage: scripts/stage-gpu.sh [--examples] [DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
rebuild_examples=0
if [[ ${1:-} == --examples ]]; then rebuild_examples=1; shift; fi
dir=${1:-$repo/.carry}
cmake --build "$repo/build" -j"$(nproc)" --target gpuperf gpuperf_inject gpuperf_preload cpu_switchy >/dev/null
mkdir -p "$dir/bin"
cp "$repo/build/gpuperf" "$repo/build/src/inject/libgpuperf_inject.so" \
  "$repo/build/src/inject/libgpuperf_preload.so" "$repo/build/bench/cpu_switchy" "$dir/bin/"
lib=$repo/build/src/inject/libunwind.so.8
[[ -e $lib ]] || lib=""
[[ -z $lib ]] && lib=$(ldconfig -p | awk '/libunwind.so.8 /{print $NF; exit}')
cp -L "$lib" "$dir/bin/libunwind.so.8"
strip --strip-debug "$dir/bin/gpuperf" "$dir/bin/libgpuperf_inject.so" "$dir/bin/libgpuperf_preload.so"
bash "$repo/bench/cupti_floor/build.sh" "$dir/bin" >/dev/null
if [[ $rebuild_examples -eq 1 || ! -x $dir/examples/launch_bound ]]; then
  bash "$repo/examples/build.sh" "$dir/examples" >/dev/null
fi
du -sh "$dir"
