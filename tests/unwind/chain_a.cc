// The chain's entry and bottom (see chain.h).
#include <cstdlib>

#include "unwind/chain.h"

namespace GP_CHAIN_NS {
namespace {

int CompareInts(const void* left, const void* right, void* arg) {
  auto* context = static_cast<ChainContext*>(arg);
  // The first comparison runs the leaf, from inside libc's sort.
  if (!context->leaf_called) {
    context->leaf_called = true;
    context->leaf_result = CallLeaf(context);
  }
  const int a = *static_cast<const int*>(left), b = *static_cast<const int*>(right);
  return (a > b) - (a < b);
}

}  // namespace

__attribute__((noinline)) int Run(int levels, ChainContext* context) {
  context->leaf_called = false;
  int result = 0;
  if (context->realign) {
    result = Realigned(levels, context);
  } else if (context->other_register) {
    result = ViaOtherRegister(levels, context);
  } else {
    result = Descend(levels, context);
  }
  return result + context->sink;  // keeps this frame (no tail call)
}

__attribute__((noinline)) int MiddleA(int levels, ChainContext* context) {
  const int result = Descend(levels - 1, context);
  return result * 3 + 1;
}

__attribute__((noinline)) int SortAndCallLeaf(ChainContext* context) {
  int values[8] = {7, 3, 5, 1, 8, 2, 6, 4};
  values[0] += context->sink;
  qsort_r(values, 8, sizeof(int), CompareInts, context);
  return values[0] + context->leaf_result;
}

}  // namespace GP_CHAIN_NS
