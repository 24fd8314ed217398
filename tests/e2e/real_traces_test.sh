#!/usr/bin/env bash
# The analysis commands on traces recorded on a real H200 and H100 (tests/data/h200,
# tests/data/h100, see each PROVENANCE): counts agree with what the example itself said it
# launched, and every command reads every trace. The H100 traces were recorded with API
# records taken in gpuperf's callbacks and frame-pointer stacks.
source "$(dirname "$0")/lib.sh"
data=$SRC/tests/data/h200
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

for trace in "$data"/*/ "$SRC"/tests/data/h100/*/; do
  compgen -G "$trace*.gpt" > /dev/null || continue  # e.g. cupti_buffers: raw buffers, not traces
  name=$(basename "$trace")
  said=$(grep '^example said:' "$trace/PROVENANCE")
  want=$(sed -n 's/.* kernels=\(-\?[0-9]*\).*/\1/p' <<< "$said")
  got=$("$GPUPERF" dump "$trace" | grep -c '^kernel ')
  if [[ $want -ge 0 ]]; then
    [[ $got -eq $want ]] || fail "$name: $got kernel records, the example launched $want"
  else
    [[ $got -gt 0 ]] || fail "$name: no kernel records"
  fi
  want_bytes=$(sed -n 's/.* memcpy_bytes=\(-\?[0-9]*\).*/\1/p' <<< "$said")
  if [[ $want_bytes -ge 0 ]]; then
    got_bytes=$("$GPUPERF" dump "$trace" | awk '/^memcpy /{for(i=1;i<=NF;i++) if ($i ~ /^bytes=/) {sub("bytes=","",$i); s+=$i}} END{print s+0}')
    [[ $got_bytes -eq $want_bytes ]] || fail "$name: copied $got_bytes bytes, the example said $want_bytes"
  fi
  expect_exit 0 "$GPUPERF" report "$trace"
  expect_exit 0 "$GPUPERF" report "$trace" --format json
  expect_exit 0 "$GPUPERF" flamegraph "$trace" -o "$dir/$name.svg"
  expect_exit 0 "$GPUPERF" export "$trace" -o "$dir/$name.perfetto-trace"
  expect_exit 0 "$GPUPERF" export "$trace" -o "$dir/$name.json"
  python3 -m json.tool "$dir/$name.json" > /dev/null || fail "$name: Chrome JSON does not parse"
done

# API records from gpuperf's callbacks (H100 traces): every kernel, copy and set has the API
# record of the call that issued it (the outermost call; CUDA gives the driver call the
# runtime call makes the same correlation id).
for trace in "$SRC"/tests/data/h100/*/; do
  name=$(basename "$trace")
  "$GPUPERF" dump "$trace" > "$dir/dump.txt"
  grep -q '# api_calls_from_callbacks$' "$dir/dump.txt" || fail "h100/$name: API records not from callbacks"
  missing=$(comm -23 <(grep -E '^(kernel|memcpy|memset) ' "$dir/dump.txt" | grep -o ' correlation_id=[0-9]*' | sort -u) \
    <(grep '^api ' "$dir/dump.txt" | grep -o ' correlation_id=[0-9]*' | sort -u) | wc -l)
  [[ $missing -eq 0 ]] || fail "h100/$name: $missing GPU activities without their API record"
done

# The report says how the H100 stacks were taken: all of the mock transformer's by frame
# pointers (libunwind confirmed each), none of PyTorch's (its libraries keep no frame records).
"$GPUPERF" report "$SRC/tests/data/h100/mock_transformer" | grep -q 'confirmed by libunwind for 51, refused for 0' \
  || fail "h100/mock_transformer: the report does not show its 51 verified frame-pointer stacks"
"$GPUPERF" report "$SRC/tests/data/h100/pytorch_transformer" | grep -q 'confirmed by libunwind for 0, refused for 26' \
  || fail "h100/pytorch_transformer: the report does not show its refused frame-pointer stacks"

# Every kernel of the real mock transformer has its launching host function on its stack,
# resolved to a name by the symbols stored at record time (H100: frame-pointer stacks).
for gpu_data in "$data" "$SRC/tests/data/h100"; do
  folded=$("$GPUPERF" flamegraph "$gpu_data/mock_transformer" --folded -o - 2>/dev/null)
  for fn in attention layer_norm matmul mlp transformer_layer; do
    grep -q "$fn" <<< "$folded" || fail "$gpu_data/mock_transformer: no '$fn' frame in the flame graph"
  done
  grep -q "unknown launch" <<< "$folded" && fail "$gpu_data/mock_transformer: kernels without a launch stack"
done
# Graph kernels hang under their graph launch.
"$GPUPERF" flamegraph "$data/cuda_graph" --folded -o - 2>/dev/null | grep -q "cudaGraphLaunch" \
  || fail "cuda_graph: no cudaGraphLaunch frame"
finish
