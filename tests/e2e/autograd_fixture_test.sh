#!/usr/bin/env bash
# A PyTorch training trace recorded on the H100 (tests/data/h100/pytorch_train/, made by
# tests/gpu/checks/autograd.sh; see its PROVENANCE): backward kernels under their forward
# op's Python frames (src/inject/torch/autograd_link.h). Every kernel joined; most of the
# backward kernels' GPU time under a forward op's Python frames, then [autograd backward],
# then the autograd node (the engine thread's frames with --native-detail); the model's own forward() with file:line among them; the
# engine's part without Python frames. Rendered like the inference fixture too
# (pytorch_fixture_test.sh with GPUPERF_PYTORCH_FIXTURE). Skips (77) while it is absent.
source "$(dirname "$0")/lib.sh"
fixture=$SRC/tests/data/h100/pytorch_train
compgen -G "$fixture/*.gpt" > /dev/null || { echo "skip: no training fixture at $fixture"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

"$GPUPERF" flamegraph --folded -o "$dir/graph.folded" "$fixture" 2> "$dir/flame.err" ||
  fail "flamegraph: $(cat "$dir/flame.err")"
joined=$(grep -o '[0-9,]*/[0-9,]* kernels joined' "$dir/flame.err" | tr -d ,)
[[ -n $joined && ${joined%%/*} == $(cut -d/ -f2 <<<"${joined%% *}") ]] ||
  fail "not every kernel joined: ${joined:-$(cat "$dir/flame.err")}"
# Backward kernels' GPU time, and the part under a forward op's Python frames.
read -r total linked < <(awk -f "$SRC/tests/tools/backward_share.awk" "$dir/graph.folded")
echo "backward kernels: $total ns, $linked ns under their forward op's Python frames"
[[ $total -gt 0 && $((linked * 10)) -ge $((total * 9)) ]] ||
  fail "under 90% of the backward kernels' time has forward frames ($linked of $total ns)"
# The PyTorch view (pytorch_view.h) names the autograd node after the label; every frame as
# recorded (--native-detail) shows the engine's.
grep -q 'Block\.forward (pytorch_transformer\.py:[0-9]*);.*\[autograd backward\];[A-Za-z0-9]*Backward[0-9]*;aten::' "$dir/graph.folded" ||
  fail "no backward kernel under Block.forward with its line, then its autograd node and op"
"$GPUPERF" flamegraph --folded --native-detail -o "$dir/native.folded" "$fixture" 2> /dev/null
grep -q 'Block\.forward (pytorch_transformer\.py:[0-9]*);.*\[autograd backward\];.*torch::autograd::Engine::evaluate_function' "$dir/native.folded" ||
  fail "--native-detail: no backward kernel under Block.forward with its line, then the engine's frames"
# (No pipe into grep -q: under pipefail, the first command's SIGPIPE would hide a match.)
after=$(sed -n 's/.*\[autograd backward\]//p' "$dir/graph.folded")
grep -q '\.py:[0-9]*)' <<<"$after" && fail "Python frames after the label: $(grep -m1 -o '.*\.py:[0-9]*)' <<<"$after")"
# The stats the recording kept.
"$GPUPERF" dump "$fixture" 2>/dev/null | grep -q '# autograd_backward_linked$' || fail "no autograd_backward_linked stat"

GPUPERF_PYTORCH_FIXTURE=$fixture bash "$SRC/tests/e2e/pytorch_fixture_test.sh" > "$dir/render.out" 2>&1 ||
  fail "rendering as a PyTorch fixture: $(tail -5 "$dir/render.out")"
finish
