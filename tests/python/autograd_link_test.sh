#!/usr/bin/env bash
# PyTorch's backward kernels under their forward op's Python frames (src/inject/torch/
# autograd_link.h), end to end with a real CPython, the fake libtorch (tests/fakes/
# fake_torch.cc: PyTorch's entry points and node layout) and the fake libcupti:
# autograd_link.py runs three steps of forward ops (each makes its autograd node, then
# launches) and a backward on a thread named like PyTorch's engine threads, which launches
# each op's backward kernel inside its node. Each backward kernel's stack must read: the
# forward op's Python frames (its own line), [autograd backward], the engine thread's native
# frames. An op that launched nothing, and the engine's own node, keep the backward thread's
# stack under the label. gpuperf must give back every node reference it took, and
# GPUPERF_AUTOGRAD_LINK=off must leave the stacks as they were.
#
# usage: autograd_link_test.sh PYTHON EXTENSION_DIR FAKE_LIBTORCH
source "$GPUPERF_SOURCE_DIR/tests/e2e/lib.sh"
python=${1:?PYTHON}
ext=${2:?EXTENSION_DIR}
torch=${3:?FAKE_LIBTORCH}
lib=$GPUPERF_BINARY_DIR/src/inject/libgpuperf_inject.so
script=$SRC/tests/python/autograd_link.py
[[ -x $python && -f $lib && -d $ext && -f $torch ]] || { echo "skip: no $python, injection library, extension or fake libtorch"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

at() { echo "autograd_link.py:$(grep -n "# line:$1\$" "$script" | cut -d: -f1)"; }
py() { echo "$1 ($(at "$2"))"; }
stat_value() { "$GPUPERF" dump "$1" 2>/dev/null | grep "# $2\$" | tail -1 | sed 's/.*value=\([0-9]*\).*/\1/'; }

"$GPUPERF" record -o "$dir/rec" --inject-lib "$lib" -- "$python" "$script" "$ext" "$torch" \
  > "$dir/out" 2> "$dir/err" || { cat "$dir/err"; fail "record failed"; finish; }
grep -q "most references to a node after its backward: 1$" "$dir/out" ||
  fail "gpuperf kept references to autograd nodes: $(grep references "$dir/out")"
"$GPUPERF" flamegraph --folded -o "$dir/graph.folded" "$dir/rec" 2> "$dir/flame.err" || fail "flamegraph"
grep -q "21/21 kernels joined" "$dir/flame.err" || fail "not every kernel joined: $(cat "$dir/flame.err")"

# The forward op's frames, then the label, then the engine thread's frames.
forward="$(py '<module>' module);$(py main main);$(py forward forward_linear);$(py linear linear)"
line=$(grep '\[GPU0\] linear_grad ' "$dir/graph.folded")
[[ $line == "$forward;[autograd backward];"*"FakeCudaLaunchKernel;cudaLaunchKernel;[GPU0] linear_grad "* ]] ||
  fail "linear_grad: want $forward;[autograd backward];...;[GPU0] linear_grad, got: $line"
forward="$(py '<module>' module);$(py main main);$(py forward forward_attention);$(py attention attention)"
line=$(grep '\[GPU0\] attention_grad ' "$dir/graph.folded")
[[ $line == "$forward;[autograd backward];"*"[GPU0] attention_grad "* ]] ||
  fail "attention_grad: want $forward;[autograd backward];...;[GPU0] attention_grad, got: $line"
# The engine thread's part has no Python frames of its own.
backward_part=${line#*\[autograd backward\];}
[[ $backward_part != *".py:"* ]] || fail "attention_grad: Python frames after the label: $line"
# Three steps, each kernel under one stack (the launches repeat from the same place): 3
# kernels of the fake GPU's 3 µs.
[[ $(grep -c '\[GPU0\] linear_grad ' "$dir/graph.folded") -eq 1 ]] || fail "linear_grad under several stacks"
grep -q "\[GPU0\] linear_grad 9000$" "$dir/graph.folded" || fail "linear_grad: want 3 kernels: $(grep linear_grad "$dir/graph.folded")"

# Unlinked: the op that launched nothing, the engine's own node: the label at the root only.
for kernel in reshape_grad accumulate; do
  line=$(grep "\[GPU0\] $kernel " "$dir/graph.folded")
  [[ $line == "[autograd backward];"*"[GPU0] $kernel "* && $line != *".py:"* ]] || fail "$kernel: $line"
done
# The forward kernels keep their own stacks (softmax: the op's second kernel).
line=$(grep '\[GPU0\] softmax ' "$dir/graph.folded")
[[ $line == "$(py '<module>' module);$(py main main);$(py forward forward_attention);attention ("* &&
  $line != *"autograd backward"* ]] || fail "softmax: $line"

[[ $(stat_value "$dir/rec" autograd_backward_linked) -eq 6 ]] ||
  fail "autograd_backward_linked: $(stat_value "$dir/rec" autograd_backward_linked), want 6"
[[ $(stat_value "$dir/rec" autograd_backward_unlinked) -eq 3 ]] ||
  fail "autograd_backward_unlinked: $(stat_value "$dir/rec" autograd_backward_unlinked), want 3"
[[ -z $(stat_value "$dir/rec" autograd_nodes_unreadable) ]] || fail "nodes read as unreadable"

# The timeline: the backward launch's slice carries the same stack.
"$GPUPERF" export -o "$dir/timeline.json" "$dir/rec" > /dev/null || fail "export"
# The engine thread's frames (the label may be in the part a deep stack's slice leaves out),
# then the forward op's frames.
"$python" "$SRC/tests/python/timeline_order.py" "$dir/timeline.json" Backward "$(py linear linear)" \
  > /dev/null || fail "timeline: no backward launch under $(py linear linear)"

# Off: every backward kernel under the engine thread's stack alone.
GPUPERF_AUTOGRAD_LINK=off "$GPUPERF" record -o "$dir/off" --inject-lib "$lib" -- "$python" "$script" "$ext" "$torch" \
  > /dev/null 2>&1 || fail "record (off)"
"$GPUPERF" flamegraph --folded -o "$dir/off.folded" "$dir/off" 2>/dev/null || fail "flamegraph (off)"
line=$(grep '\[GPU0\] linear_grad ' "$dir/off.folded")
[[ $line == "[autograd backward];"* && $line != *".py:"* ]] || fail "GPUPERF_AUTOGRAD_LINK=off: $line"
finish
