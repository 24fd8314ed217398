#!/usr/bin/env bash
# Real CUDA 13 activity buffers recorded on an H200 go through the injection library's
# translator (with the real libcupti parsing them: it needs no driver) and must match a
# golden dump. GPUPERF_BLESS=1 rewrites the goldens.
source "$(dirname "$0")/lib.sh"
replay=$GPUPERF_BINARY_DIR/src/inject/gpuperf_replay
[[ -x $replay ]] || { echo "skip: gpuperf_replay not built (no CUPTI headers)"; exit 77; }
"$replay" /dev/null 2>/dev/null  # usage check only
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
for case_dir in "$SRC"/tests/data/h200/cupti_buffers/*/; do
  name=$(basename "$case_dir")
  if ! "$replay" "$dir/$name.gpt" "$case_dir"/*.bin > "$dir/$name.log" 2>&1; then
    if grep -q "CUPTI_ERROR\|cannot open shared object" "$dir/$name.log"; then
      echo "skip: the real libcupti cannot parse buffers here: $(head -1 "$dir/$name.log")"; exit 77
    fi
    fail "$name: replay failed: $(cat "$dir/$name.log")"
    continue
  fi
  "$GPUPERF" dump "$dir/$name.gpt" > "$dir/$name.dump" || fail "$name: dump failed"
  golden=$SRC/tests/golden/replay/$name.dump
  if [[ ${GPUPERF_BLESS:-0} == 1 ]]; then
    mkdir -p "$(dirname "$golden")"; cp "$dir/$name.dump" "$golden"; continue
  fi
  diff -q "$golden" "$dir/$name.dump" >/dev/null || fail "$name: differs from $golden (GPUPERF_BLESS=1 to update): $(diff "$golden" "$dir/$name.dump" | head -5)"
  # The translation itself, checked against what the example said it did.
  said=$(grep '^example said:' "$case_dir/PROVENANCE")
  want=$(sed -n 's/.* kernels=\([0-9]*\).*/\1/p' <<< "$said")
  got=$(grep -c '^kernel ' "$dir/$name.dump")
  [[ $got -eq $want ]] || fail "$name: $got kernels after replay, the example launched $want"
  grep -q '^kernel .*name=""' "$dir/$name.dump" && fail "$name: a kernel lost its name"
done
if [[ -d $SRC/tests/data/h200/cupti_buffers/cuda_graph ]]; then
  graph_kernels=$(grep '^kernel ' "$dir/cuda_graph.dump" | grep -vc 'graph_id=0 ')
  [[ $graph_kernels -eq 800 ]] || fail "cuda_graph: $graph_kernels kernels carry a graph id, want 800"
fi
finish
