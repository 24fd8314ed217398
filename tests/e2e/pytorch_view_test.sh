#!/usr/bin/env bash
# The PyTorch view (docs/flamegraph.md "The PyTorch view", analyze/symbols/pytorch_view.h) on
# the PyTorch traces recorded on an H100 and an H200 (tests/data/*/pytorch_*):
#   - every output's GPU time is the same to the nanosecond with and without --native-detail:
#     the view changes frames, never weights;
#   - the default stacks hold none of the dispatcher's plumbing (boxing wrappers, the Python
#     binding), no nn.Module call machinery, no unsymbolized cuBLAS/cuBLASLt frame; the
#     native-detail stacks still do, where the trace has them;
#   - a plain op's tower (one ATen op) from its innermost Python frame to the kernel takes at
#     most 8 frames;
#   - report's stack listings, the timeline's stack annotations, the pprof profile and the
#     Parquet dataset's frames read the same way; goldens of both views for one trace (GPUPERF_BLESS=1 writes them).
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

plumbing='wrap_kernel_functor_unboxed_|THPVariable_|Module\._call_impl|Module\._wrapped_call_impl|libcublasLt\.so[.0-9]*\+0x|libcublas\.so[.0-9]*\+0x|at::_ops::'
# total FOLDED: the sum of the folded stacks' weights.
total() { awk '{ sum += $NF } END { printf "%d", sum }' "$1"; }

traces=()
for trace in "$SRC"/tests/data/*/pytorch_*; do [[ -d $trace ]] && traces+=("$trace"); done
[[ ${#traces[@]} -ge 3 ]] || fail "only ${#traces[@]} PyTorch traces found"
for trace in "${traces[@]}"; do
  name=$(basename "$(dirname "$trace")")_$(basename "$trace")
  "$GPUPERF" flamegraph "$trace" --format folded -o "$dir/$name.folded" 2>/dev/null ||
    fail "$name: flamegraph failed"
  "$GPUPERF" flamegraph "$trace" --format folded --native-detail -o "$dir/$name.native.folded" 2>/dev/null ||
    fail "$name: flamegraph --native-detail failed"
  [[ $(total "$dir/$name.folded") -eq $(total "$dir/$name.native.folded") ]] ||
    fail "$name: GPU time $(total "$dir/$name.folded") in the view, $(total "$dir/$name.native.folded") with --native-detail"
  if grep -qE "$plumbing" "$dir/$name.folded"; then
    fail "$name: plumbing left in the view: $(grep -oE "$plumbing" "$dir/$name.folded" | sort | uniq -c | head -3)"
  fi
  # The trace really has what the view folds (else the test above proves nothing).
  grep -qE 'at::_ops::|wrap_kernel_functor_unboxed_' "$dir/$name.native.folded" ||
    fail "$name: no dispatcher frame even with --native-detail"
  # Towers of one op: from the innermost Python frame (file.py:N) to the GPU frame.
  longest=$(awk '{
      $NF = ""; n = split($0, f, ";"); last = 0; ops = 0
      for (i = 1; i <= n; i++) if (f[i] ~ /\.py:[0-9]+\)$/) last = i
      for (i = last + 1; i <= n; i++) if (f[i] ~ /^aten::/) ops++
      if (last > 0 && ops == 1 && n - last > worst) worst = n - last
    } END { print worst + 0 }' "$dir/$name.folded")
  [[ $longest -le 8 ]] || fail "$name: a tower of $longest frames from the Python line to its kernel"
  "$GPUPERF" report "$trace" > "$dir/$name.txt" 2>/dev/null || fail "$name: report failed"
  if grep -qE 'wrap_kernel_functor_unboxed_|THPVariable_' "$dir/$name.txt"; then
    fail "$name: the report's stacks hold plumbing"
  fi
done

# The timeline's stack annotations and the pprof profile fold the same way.
one=${traces[0]}
"$GPUPERF" export "$one" -o "$dir/t.json" 2>/dev/null || fail "export failed"
"$GPUPERF" export "$one" -o "$dir/n.json" --native-detail 2>/dev/null || fail "export --native-detail failed"
if grep -qE 'wrap_kernel_functor_unboxed_|THPVariable_' "$dir/t.json"; then fail "the timeline's stacks hold plumbing"; fi
grep -qE 'wrap_kernel_functor_unboxed_|at::_ops::' "$dir/n.json" || fail "the --native-detail timeline lost the native frames"
"$GPUPERF" export "$one" -o "$dir/p.pb.gz" 2>/dev/null || fail "pprof export failed"
"$GPUPERF" export "$one" -o "$dir/pn.pb.gz" --native-detail 2>/dev/null || fail "pprof --native-detail failed"
if zcat "$dir/p.pb.gz" | grep -qaE 'wrap_kernel_functor_unboxed_|THPVariable_'; then fail "the pprof profile holds plumbing"; fi
zcat "$dir/pn.pb.gz" | grep -qaE 'wrap_kernel_functor_unboxed_|at::_ops::' || fail "the --native-detail profile lost the native frames"

# The Parquet dataset names frames as the flame graph does with the same options: its frames
# table changes with --native-detail on a PyTorch trace, and not at all on a plain CUDA one.
for case in "h100/pytorch_train differ" "h100/vector_add same"; do
  read -r fixture want <<<"$case"
  for v in view native; do
    flag=(); [[ $v == native ]] && flag=(--native-detail)
    "$GPUPERF" export "$SRC/tests/data/$fixture" --format parquet -o "$dir/pq.$v" "${flag[@]}" >/dev/null 2>&1 ||
      fail "$fixture: parquet export ${flag[*]} failed"
  done
  if cmp -s "$dir"/pq.view/frames/*/*.parquet "$dir"/pq.native/frames/*/*.parquet; then got=same; else got=differ; fi
  [[ $got == "$want" ]] || fail "$fixture: the dataset's frames with and without --native-detail $got, want $want"
  rm -rf "$dir/pq.view" "$dir/pq.native"
done

# Goldens of both views for one trace.
golden() {
  local want=$SRC/tests/golden/flamegraph/$1
  if [[ ${GPUPERF_BLESS:-0} == 1 ]]; then cp "$2" "$want"; return; fi
  [[ -f $want ]] || { fail "no golden $want (GPUPERF_BLESS=1 writes it)"; return; }
  diff -q "$want" "$2" >/dev/null || fail "$1 differs from its golden: $(diff "$want" "$2" | head -6)"
}
golden h100_pytorch_train.folded "$dir/h100_pytorch_train.folded"
golden h100_pytorch_train_native.folded "$dir/h100_pytorch_train.native.folded"

finish
