#!/usr/bin/env bash
# All GPU checks in one call (CI has no GPU; this runs on the GPU machine).
#
# usage: tests/gpu/run.sh BIN_DIR EXAMPLES_DIR
#   BIN_DIR       gpuperf, libgpuperf_inject.so (+ libunwind.so.8), built on the dev machine
#   EXAMPLES_DIR  examples built by examples/build.sh
# Writes under $OUT: results.txt (every check), fixtures.tar.gz (small real traces with a
# PROVENANCE file, and raw CUPTI buffers for the replay test), machine.txt.
set -uo pipefail
bin=$(cd "${1:?BIN_DIR}" && pwd)
ex=$(cd "${2:?EXAMPLES_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/gpuperf-gpu}
work=/tmp/gpuperf-gpu-work
rm -rf "$work"; mkdir -p "$out" "$work/fixtures" "$work/buffers"
gp=$bin/gpuperf
results=$out/results.txt
: > "$results"
failed=0

{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc --version | tail -1
  uname -r
  python3 -c 'import torch; print("torch", torch.__version__)' 2>&1 | tail -1
} > "$out/machine.txt" 2>&1
gpu=$(head -1 "$out/machine.txt")

# record NAME EXPECTED_FUNCTIONS -- CMD...: record, check against the example's own line.
record() {
  local name=$1 functions=$2; shift 3
  local dir=$work/rec/$name
  local extra=()
  [[ $name == vector_add || $name == cuda_graph ]] && extra=(--save-buffers "$work/buffers/$name")
  mkdir -p "$work/buffers/$name"
  local t0=$SECONDS
  timeout 300 "$gp" record -o "$dir" --force "${extra[@]}" -- "$@" > "$work/$name.out" 2> "$work/$name.err"
  local rc=$?
  echo "== $name: exit $rc ($((SECONDS - t0)) s) $(grep -h 'gpuperf-example:' "$work/$name.out" | head -1)" | tee -a "$results"
  if [[ $rc -ne 0 ]]; then
    tail -5 "$work/$name.err" | tee -a "$results"
    failed=$((failed + 1))
    return
  fi
  grep -E "^gpuperf: |^  " "$work/$name.err" | sed 's/^/   /' >> "$results"
  # How launch stacks were taken: frame-pointer stacks confirmed or refused by libunwind.
  "$gp" dump "$dir" 2>/dev/null | grep -E '# (fp_stacks_verified|fp_stacks_rejected|unique_stacks)$' |
    sed 's/^stat [^ ]* /   /' | sort -u >> "$results"
  local args=()
  for f in $functions; do args+=(--expect-function "$f"); done
  python3 "$src/tests/gpu/check_recording.py" "$gp" "$dir" "$work/$name.out" "${args[@]}" \
    | tee -a "$results" | grep -q '^FAIL' && failed=$((failed + 1))
  # Small traces become CI fixtures.
  local size; size=$(du -sk "$dir" | cut -f1)
  if [[ $size -lt 400 ]]; then
    mkdir -p "$work/fixtures/$name"
    cp "$dir"/*.gpt "$work/fixtures/$name/"
    printf 'GPU: %s\nCUDA: %s\nkernel: %s\ncommand: gpuperf record -- %s\nexample said: %s\n' \
      "$gpu" "$(sed -n 2p "$out/machine.txt")" "$(uname -r)" "$*" \
      "$(grep -h 'gpuperf-example:' "$work/$name.out" | head -1)" > "$work/fixtures/$name/PROVENANCE"
  fi
}

record vector_add "vector_add" -- "$ex/vector_add"
record vector_add_static "vector_add" -- "$ex/vector_add_static"
record mock_transformer "attention layer_norm matmul mlp transformer_layer" -- "$ex/mock_transformer" --steps 3
record multi_stream "" -- "$ex/multi_stream"
record cuda_graph "" -- "$ex/cuda_graph"
record memcpy_kinds "" -- "$ex/memcpy_kinds"
record driver_launch "" -- "$ex/driver_launch"
record cublas_gemm "" -- "$ex/cublas_gemm"
record launch_bound "" -- "$ex/launch_bound" --launches 200000
record pytorch_transformer "" -- python3 "$src/examples/pytorch_transformer.py" --steps 5
record pytorch_train "" -- python3 "$src/examples/pytorch_transformer.py" --train --steps 5

# --- PyTorch launch stacks with Python frames (docs/recording.md "Python frames") ---
# python_stacks NAME: the default flame graph joins every kernel, shows the example's own
# forward functions with file:line and no interpreter frames; --python-internals brings
# the eval loop back. Leaves NAME.folded, NAME.svg and NAME.internals.folded in $OUT.
python_stacks() {
  local name=$1 dir=$work/rec/$1 folded=$out/$1.folded
  [[ -d $dir ]] || { echo "FAIL $name: no recording" | tee -a "$results"; failed=$((failed + 1)); return; }
  "$gp" flamegraph --folded -o "$folded" "$dir" 2> "$work/$name.flame.err"
  "$gp" flamegraph -o "$out/$name.svg" "$dir" 2>/dev/null
  "$gp" flamegraph --folded --python-internals -o "$out/$name.internals.folded" "$dir" 2>/dev/null
  local joined; joined=$(grep -o '[0-9]*/[0-9]* kernels joined' "$work/$name.flame.err")
  py_check() {  # py_check OK WHAT
    if [[ $1 == 1 ]]; then echo "ok   $name: $2" | tee -a "$results"
    else echo "FAIL $name: $2" | tee -a "$results"; failed=$((failed + 1)); fi
  }
  py_check "$([[ -n $joined && ${joined%%/*} == $(cut -d/ -f2 <<<"${joined%% *}") ]] && echo 1)" \
    "every kernel joined to a launch stack ($joined)"
  local own; own=$(grep -o '[A-Za-z_.]*forward (pytorch_transformer\.py:[0-9]*)' "$folded" | sort -u)
  py_check "$([[ $(wc -l <<<"$own") -ge 3 && -n $own ]] && echo 1)" \
    "the model's forward functions with file:line: $(tr '\n' ' ' <<<"$own")"
  py_check "$(grep -q '_PyEval_EvalFrameDefault\|python3\.[0-9]*+0x\|libpython[^;]*+0x' "$folded" || echo 1)" \
    "no interpreter frames in the default flame graph"
  py_check "$(grep -q '_PyEval_EvalFrameDefault' "$out/$name.internals.folded" && echo 1)" \
    "--python-internals keeps _PyEval_EvalFrameDefault"
  # What sits right under the model's innermost forward frame (torch's Python, then ops).
  echo "   under the model's frames: $(grep -o 'pytorch_transformer\.py:[0-9]*);[^;]*;[^;]*' "$folded" |
    cut -d';' -f2- | sort | uniq -c | sort -rn | head -3 | tr -s ' ' | tr '\n' '|')" | tee -a "$results"
  "$gp" dump "$dir" 2>/dev/null | grep -E '# python_' | sed 's/^stat [^ ]* /   /' | sort -u >> "$results"
}
python_stacks pytorch_transformer
python_stacks pytorch_train
# Backward runs on the autograd engine's threads, which have no Python frames: labelled.
grep -q '^\[autograd backward\];' "$out/pytorch_train.folded" \
  && echo "ok   pytorch_train: backward kernels under [autograd backward]" | tee -a "$results" \
  || { echo "FAIL pytorch_train: no [autograd backward] stacks" | tee -a "$results"; failed=$((failed + 1)); }

# Behaviour checks beyond counts.
echo "== no CUDA: $("$gp" record -o "$work/rec/nocuda" -- true 2>&1 | tail -1) (exit $?)" | tee -a "$results"
echo "== report/flamegraph/export on mock_transformer" | tee -a "$results"
for cmd in "report" "flamegraph --folded -o $work/mock.folded" "export -o $work/mock.perfetto-trace"; do
  "$gp" $cmd "$work/rec/mock_transformer" > "$work/cmd.out" 2>&1; echo "   gpuperf $cmd: exit $?" | tee -a "$results"
done
head -c 4000 "$work/cmd.out" > /dev/null
"$gp" report "$work/rec/mock_transformer" > "$out/mock_transformer_report.txt" 2>&1
"$gp" flamegraph "$work/rec/mock_transformer" -o "$out/mock_transformer.svg" >/dev/null 2>&1

cp -r "$work/buffers" "$work/fixtures/cupti_buffers"
tar -C "$work" -czf "$out/fixtures.tar.gz" fixtures
echo "GPU checks: $failed failed" | tee -a "$results"
exit $((failed > 0))
