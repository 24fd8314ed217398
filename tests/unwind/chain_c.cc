// The chain's unusual frames (see chain.h).
#include <alloca.h>

#include <cstring>

#include "unwind/chain.h"

namespace GP_CHAIN_NS {

// alloca makes the compiler address the frame through RBP: the CFA is RBP-based here.
__attribute__((noinline)) int WithAlloca(int levels, ChainContext* context) {
  const int size = 64 + levels * 16;
  auto* buffer = static_cast<volatile char*>(alloca(static_cast<size_t>(size)));
  buffer[size - 1] = static_cast<char>(levels);
  const int result = Descend(levels - 1, context);
  return result + buffer[size - 1];
}

// A 64 KiB frame (with stack-clash protection, probed page by page in the prologue).
__attribute__((noinline)) int WithBigArray(int levels, ChainContext* context) {
  volatile char big[1 << 16];
  big[levels] = static_cast<char>(levels);
  big[sizeof(big) - 1] = 1;
  const int result = Descend(levels - 1, context);
  return result + big[levels] + big[sizeof(big) - 1];
}

// Ends with a call in tail position: compiled to a jump, so this frame is never on a stack.
__attribute__((noinline)) int TailCaller(int levels, ChainContext* context) {
  context->sink = context->sink + 1;
  return Descend(levels - 1, context);
}

// A 64-byte-aligned local and a variable-length array make the compiler realign the stack
// through a DRAP register: the CFA at the call is *(RBP - 8), an expression.
__attribute__((noinline)) int Realigned(int levels, ChainContext* context) {
  alignas(64) volatile int aligned[16];
  aligned[0] = levels;
  volatile char variable[levels + 1];
  variable[0] = 1;
  const int result = Descend(levels, context);
  return result + aligned[0] + variable[0];
}

__attribute__((noinline)) int CallLeaf(ChainContext* context) {
  const int result = context->leaf(context->arg);
  return result + context->sink;
}

}  // namespace GP_CHAIN_NS
