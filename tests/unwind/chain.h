// A call chain through three shared libraries (chain_a.cc, chain_b.cc, chain_c.cc) and
// libc's qsort_r, for checking and timing unwinders on code built without frame pointers
// (tests/CMakeLists.txt builds it with -O2 -fomit-frame-pointer, and once more with frame
// pointers for the benchmark; GP_CHAIN_NS keeps the two builds' symbols apart).
//
// The frames on the way differ in what their call-frame information says: small and large
// fixed frames (a 64 KiB array, stack-clash probing in chain_c), RBP-based frames (alloca),
// callee-saved registers pushed around calls, a tail call (its frame disappears), a
// comparison callback called from inside libc, and on request a frame that realigns the
// stack through a DRAP register (its CFA is read from a stack slot: an expression), or a
// hand-written frame whose CFA is kept in R12, which only libunwind follows.
//
// No include guard: a file may include this once per build of the chain, defining
// GP_CHAIN_NS before each (the benchmark uses both).
#ifndef GP_CHAIN_NS
#error "GP_CHAIN_NS must name the chain build's namespace"
#endif

namespace GP_CHAIN_NS {

struct ChainContext {
  int (*leaf)(void* arg) = nullptr;  // runs at the bottom of the chain, once
  void* arg = nullptr;
  bool realign = false;         // enter through Realigned (chain_c)
  bool other_register = false;  // enter through ViaOtherRegister (chain_c)
  bool leaf_called = false;
  int leaf_result = 0;
  volatile int sink = 0;
};

// chain_a: the entry, a plain middle frame, and the qsort_r bottom.
int Run(int levels, ChainContext* context);
int MiddleA(int levels, ChainContext* context);
int SortAndCallLeaf(ChainContext* context);

// chain_b: picks the next kind of frame from `levels`.
int Descend(int levels, ChainContext* context);
int ManyRegisters(int levels, ChainContext* context);

// chain_c: alloca, a big array, a tail call, the realigned frame, the frame with its CFA in
// R12, and the leaf's caller.
int WithAlloca(int levels, ChainContext* context);
int WithBigArray(int levels, ChainContext* context);
int TailCaller(int levels, ChainContext* context);
int Realigned(int levels, ChainContext* context);
int ViaOtherRegister(int levels, ChainContext* context);
int CallLeaf(ChainContext* context);

}  // namespace GP_CHAIN_NS
