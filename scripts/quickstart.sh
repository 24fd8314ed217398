#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job:
#  - on a machine with an NVIDIA GPU: records the bundled mock transformer example;
#  - without one: renders the bundled trace recorded on an H200 (tests/data/h200).
# Either way it writes a report, a flame graph and a timeline into ./gpuperf-quickstart/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build=${GPUPERF_BUILD_DIR:-build}
have_gpu() { command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && command -v nvcc >/dev/null; }
# Unity batches: the CLI builds in under half the compiler time (docs/performance.md, "Build").
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUPERF_UNITY_BUILD=ON >/dev/null
# Only what the main job runs: the injection library only where there is a GPU to record.
targets=(gpuperf)
have_gpu && targets+=(gpuperf_inject)
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"
gp=$build/gpuperf
out=gpuperf-quickstart
rm -rf "$out"; mkdir -p "$out"

if have_gpu; then
  echo "quickstart: GPU found; building and recording the mock transformer example"
  nvcc -O2 -g -lineinfo -arch=native -cudart shared -o "$out/mock_transformer" examples/mock_transformer.cu
  "$gp" record -o "$out/trace" -- "$out/mock_transformer" --steps 5
  trace=$out/trace
else
  echo "quickstart: no GPU here; using the trace recorded on an H200 (tests/data/h200/mock_transformer)"
  trace=tests/data/h200/mock_transformer
fi
"$gp" report "$trace" | tee "$out/report.txt"
"$gp" flamegraph "$trace" -o "$out/flamegraph.svg"
"$gp" export "$trace" -o "$out/timeline.perfetto-trace"
echo
echo "quickstart: wrote $out/report.txt, $out/flamegraph.svg (open in a browser) and"
echo "            $out/timeline.perfetto-trace (open at https://ui.perfetto.dev)"
