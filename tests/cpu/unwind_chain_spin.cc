// A CPU-bound program whose hot path keeps no frame pointers, for the eBPF CPU profiler's
// .eh_frame unwinding (tests/e2e/cpu_unwind_test.sh): main calls into the unwinder tests'
// chain of three shared libraries built -O2 -fomit-frame-pointer (tests/unwind/chain.h),
// which reaches unwind_chain_spin (here, also without frame pointers) through libc's
// qsort_r: main -> Run (a) -> Descend (b) -> SortAndCallLeaf (a) -> qsort_r (libc) ->
// CompareInts (a) -> CallLeaf (c) -> unwind_chain_spin, which spins for argv[1] ms of its own
// CPU time (not of the clock's: on a busy machine it gets fewer cycles a second, and the
// profiler samples CPU time, so the test sees the same number of samples either way).
// With "small-stack" as argv[2], the chain runs on a 12 KiB stack of its own with an
// unmapped page above it (entered through gp_run_on_stack, whose call-frame information
// marks the outermost frame there): a 16 KiB copy from the stack pointer cannot be read
// whole, so the BPF program must find the part that can.
#include <sys/mman.h>

#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "unwind/chain.h"

namespace {

volatile unsigned long g_sink = 0;

long ThreadCpuMs() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

}  // namespace

extern "C" __attribute__((noinline)) int unwind_chain_spin(void* arg) {
  const long until = ThreadCpuMs() + *static_cast<const long*>(arg);
  unsigned long x = 1;
  while (ThreadCpuMs() < until) {
    for (int i = 0; i < 200000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
    g_sink = x;
  }
  return static_cast<int>(x & 1);
}

// gp_run_on_stack(top, fn): calls fn() with the stack pointer at `top`; the caller's frame
// is restored afterwards. Its return address on the new stack is the end of that stack's
// chain of frames (DW_CFA_undefined rip), as __libc_start_call_main's is for the main one.
extern "C" void gp_run_on_stack(void* top, void (*fn)());
asm(R"(
  .pushsection .text
  .p2align 4
  .type gp_run_on_stack, @function
gp_run_on_stack:
  .cfi_startproc
  pushq %rbp
  .cfi_def_cfa_offset 16
  .cfi_offset %rbp, -16
  movq %rsp, %rbp
  .cfi_def_cfa_register %rbp
  movq %rdi, %rsp
  .cfi_undefined %rip
  callq *%rsi
  movq %rbp, %rsp
  popq %rbp
  .cfi_def_cfa %rsp, 8
  ret
  .cfi_endproc
  .size gp_run_on_stack, .-gp_run_on_stack
  .popsection
)");

namespace {

long g_ms = 1000;
int g_result = -1;

__attribute__((noinline)) int RunChain() {
  chain_nofp::ChainContext context;
  context.leaf = unwind_chain_spin;
  context.arg = &g_ms;
  const int result = chain_nofp::Run(0, &context);
  return context.leaf_called ? result : -1;
}

// 6 KB of locals: the frames below start two pages under the unmapped one, so the copy
// that reads is more than the stack pointer's own page.
__attribute__((noinline)) void OnSmallStack() {
  volatile char pad[6000];
  pad[0] = 1;
  pad[sizeof(pad) - 1] = 2;
  g_result = RunChain() + pad[0] - pad[sizeof(pad) - 1] + 1;
}

}  // namespace

int main(int argc, char** argv) {
  g_ms = argc > 1 ? std::atol(argv[1]) : 1000;
  if (argc > 2 && std::strcmp(argv[2], "small-stack") == 0) {
    constexpr size_t kPage = 4096, kStack = 3 * kPage;
    void* memory =
        mmap(nullptr, kStack + kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED || mprotect(static_cast<char*>(memory) + kStack, kPage, PROT_NONE)) {
      return 2;
    }
    gp_run_on_stack(static_cast<char*>(memory) + kStack, OnSmallStack);
  } else {
    g_result = RunChain();
  }
  std::printf("unwind_chain_spin: spun %ld ms (%d)\n", g_ms, g_result);
  return g_result < 0 ? 1 : 0;
}
