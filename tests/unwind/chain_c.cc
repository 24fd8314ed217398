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

#define GP_CHAIN_STRING2(x) #x
#define GP_CHAIN_STRING(x) GP_CHAIN_STRING2(x)
#define GP_VIA_R12 "gp_unwind_via_r12_" GP_CHAIN_STRING(GP_CHAIN_NS)

// via_r12(levels, context, next) calls next(levels, context) from a frame whose CFI keeps the
// CFA in R12 (a callee-saved register, so the frames below preserve it): valid DWARF that
// no compiler writes for x86-64, and no table row can hold.
extern "C" int ViaR12(int levels, ChainContext* context,
                      int (*next)(int, ChainContext*)) __asm__(GP_VIA_R12);
asm(".pushsection .text\n"
    ".p2align 4\n"
    ".hidden " GP_VIA_R12
    "\n"
    ".type " GP_VIA_R12 ", @function\n" GP_VIA_R12
    ":\n"
    ".cfi_startproc\n"
    "  pushq %r12\n"
    "  .cfi_def_cfa_offset 16\n"
    "  .cfi_offset %r12, -16\n"
    "  movq %rsp, %r12\n"
    "  .cfi_def_cfa_register %r12\n"
    "  subq $16, %rsp\n"
    "  call *%rdx\n"
    "  movq %r12, %rsp\n"
    "  .cfi_def_cfa_register %rsp\n"
    "  popq %r12\n"
    "  .cfi_def_cfa_offset 8\n"
    "  ret\n"
    ".cfi_endproc\n"
    ".size " GP_VIA_R12 ", .-" GP_VIA_R12
    "\n"
    ".popsection\n");

__attribute__((noinline)) int ViaOtherRegister(int levels, ChainContext* context) {
  const int result = ViaR12(levels, context, Descend);
  return result + context->sink;  // keeps this frame (no tail call)
}

__attribute__((noinline)) int CallLeaf(ChainContext* context) {
  const int result = context->leaf(context->arg);
  return result + context->sink;
}

}  // namespace GP_CHAIN_NS
