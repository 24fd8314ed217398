# From a folded flame graph: "BACKWARD_NS LINKED_NS", the GPU time of PyTorch's backward
# kernels (stacks with [autograd backward]) and the part of it under a forward op's Python
# frames (a file.py:N frame before the label; src/inject/torch/autograd_link.h).
# Used by tests/gpu/checks/autograd.sh and tests/e2e/autograd_fixture_test.sh.
/\[autograd backward\]/ {
  total += $NF
  split($0, parts, "\\[autograd backward\\]")
  if (parts[1] ~ /\.py:[0-9]+\)/) linked += $NF
}
END { printf "%d %d\n", total, linked }
