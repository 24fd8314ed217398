// The chain's dispatcher (see chain.h).
#include "unwind/chain.h"

namespace GP_CHAIN_NS {

__attribute__((noinline)) int Descend(int levels, ChainContext* context) {
  if (levels <= 0) return SortAndCallLeaf(context) + 1;
  int result = 0;
  switch (levels % 5) {
    case 0:
      result = WithAlloca(levels, context);
      break;
    case 1:
      result = WithBigArray(levels, context);
      break;
    case 2:
      result = MiddleA(levels, context);
      break;
    case 3:
      result = TailCaller(levels, context);
      break;
    default:
      result = ManyRegisters(levels, context);
      break;
  }
  return result + levels;
}

// Values live across the call sit in callee-saved registers, pushed in the prologue.
__attribute__((noinline)) int ManyRegisters(int levels, ChainContext* context) {
  const int a = context->sink, b = context->sink * 3, c = context->sink ^ 7;
  const int d = context->sink + 11, e = context->sink * 5, f = context->sink - 2;
  const int result = Descend(levels - 1, context);
  return result + a + b * c + d * e + f;
}

}  // namespace GP_CHAIN_NS
