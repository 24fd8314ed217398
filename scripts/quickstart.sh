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
# Unity batches and no debug information: the CLI builds in well under half the compiler time
# (docs/performance.md, "Build"); a developer's build (scripts/test.sh) keeps both.
# Ninja compiles a library's files while the libraries it links are still compiling, where
# make waits for them (a build directory keeps the generator it was made with).
generator=(); [[ -f $build/CMakeCache.txt ]] || generator=(-G Ninja)
cmake "${generator[@]}" -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPUPERF_UNITY_BUILD=ON >/dev/null
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
# The three outputs from one read of the trace (docs/report.md, "Several outputs from one read").
"$gp" report "$trace" -o "$out/report.txt" -o "$out/flamegraph.svg" \
  -o "$out/timeline.perfetto-trace"
cat "$out/report.txt"
echo
echo "quickstart: wrote $out/report.txt, $out/flamegraph.svg (open in a browser) and"
echo "            $out/timeline.perfetto-trace (open at https://ui.perfetto.dev)"
