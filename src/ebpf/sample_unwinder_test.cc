// The recorder's .eh_frame unwinding of stack copies, on this process's own stack: tables
// built from the files on disk (placed at their load addresses) must walk a copy of the
// stack, taken as the BPF program takes it, through the test's own frames; copies of
// garbage must end without a fault.
#include "ebpf/sample_unwinder.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>

namespace gpuperf::ebpf {
namespace {

// This thread's stack end, or 0.
uint64_t StackHigh() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
  void* low = nullptr;
  size_t size = 0;
  pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  return reinterpret_cast<uint64_t>(low) + size;
}

// Takes the registers at an instruction of this function and copies the stack above them,
// as on_cpu_sample does; `*return_address` is where this function returns to.
__attribute__((noinline)) void CopyOwnStack(gp_user_stack_copy* copy, uint64_t* return_address) {
  uint64_t ip, sp, bp;
  asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(ip), "=r"(sp), "=r"(bp));
  copy->ip = ip;
  copy->sp = sp;
  copy->bp = bp;
  const uint64_t high = StackHigh();
  copy->size = static_cast<uint32_t>(std::min<uint64_t>(GP_STACK_COPY_BYTES, high - sp));
  std::memcpy(copy->words, reinterpret_cast<const void*>(sp), copy->size);
  *return_address = reinterpret_cast<uint64_t>(__builtin_return_address(0));
}

std::unique_ptr<SampleUnwinder> UnwinderOfThisProcess() {
  auto unwinder = std::make_unique<SampleUnwinder>();
  std::map<std::string, ElfLayout> cache;
  for (const MappedModule& m : ReadProcessModules(static_cast<uint32_t>(getpid()), cache)) {
    unwinder->AddModule(static_cast<uint32_t>(getpid()), m);
  }
  return unwinder;
}

// Unwinds as the recorder does, then again each time the walk stopped at a table it asked
// for, once the unwinder's thread has built it.
TableWalkResult UnwindBuilt(SampleUnwinder& unwinder, uint32_t pid, const gp_user_stack_copy& copy,
                            uint64_t* pcs) {
  TableWalkResult r = unwinder.Unwind(pid, copy, pcs, GP_MAX_STACK_DEPTH);
  for (int i = 0; i < 64 && r.stop == TableWalkStop::kPending; ++i) {
    unwinder.WaitForTables();
    r = unwinder.Unwind(pid, copy, pcs, GP_MAX_STACK_DEPTH);
  }
  return r;
}

__attribute__((noinline)) TableWalkResult UnwindHere(SampleUnwinder& unwinder, uint64_t* pcs,
                                                     uint64_t* caller, uint64_t* here) {
  auto copy = std::make_unique<gp_user_stack_copy>();
  CopyOwnStack(copy.get(), caller);
  *here = copy->ip;
  const TableWalkResult r = UnwindBuilt(unwinder, static_cast<uint32_t>(getpid()), *copy, pcs);
  asm volatile("" ::: "memory");  // keeps this frame (no tail call)
  return r;
}

TEST(SampleUnwinder, WalksACopyOfThisThreadsStackWithTablesFromTheFiles) {
  auto unwinder = UnwinderOfThisProcess();
  uint64_t pcs[GP_MAX_STACK_DEPTH];
  uint64_t caller = 0, here = 0;
  const TableWalkResult r = UnwindHere(*unwinder, pcs, &caller, &here);
  EXPECT_TRUE(r.complete() || r.stop == TableWalkStop::kEndOfCopy) << static_cast<int>(r.stop);
  ASSERT_GE(r.depth, 4);
  EXPECT_EQ(pcs[0], here);    // the "interrupted" instruction
  EXPECT_EQ(pcs[1], caller);  // into UnwindHere
  // Only the modules the walk went through were built (lazily), each once.
  const uint64_t built = unwinder->tables_built();
  EXPECT_GE(built, 1u);
  UnwindHere(*unwinder, pcs, &caller, &here);
  EXPECT_EQ(unwinder->tables_built(), built);
}

TEST(SampleUnwinder, ProcessesMappingAFileElsewhereShareItsTable) {
  // A second "process" maps every module of this one `delta` higher: its copy is this
  // stack's with the return addresses moved as far. It unwinds to the same PCs moved by
  // delta, with the tables the first walk built (per file, not per load address).
  auto unwinder = std::make_unique<SampleUnwinder>();
  const auto pid = static_cast<uint32_t>(getpid());
  constexpr uint32_t kOther = 1u << 30;  // no real pid is that high (pid_max <= 2^22)
  constexpr uint64_t delta = uint64_t{1} << 40;
  std::map<std::string, ElfLayout> cache;
  for (MappedModule m : ReadProcessModules(pid, cache)) {
    unwinder->AddModule(pid, m);
    m.start += delta;
    m.end += delta;
    m.load_bias += delta;
    unwinder->AddModule(kOther, m);
  }
  auto copy = std::make_unique<gp_user_stack_copy>();
  uint64_t caller = 0;
  CopyOwnStack(copy.get(), &caller);
  uint64_t pcs[GP_MAX_STACK_DEPTH], moved_pcs[GP_MAX_STACK_DEPTH];
  const TableWalkResult r = UnwindBuilt(*unwinder, pid, *copy, pcs);
  ASSERT_GE(r.depth, 4);
  const uint64_t built = unwinder->tables_built();
  const size_t words = std::min<size_t>(copy->size, GP_STACK_COPY_BYTES) / 8;
  for (size_t i = 0; i < words; ++i) {
    if (std::find(pcs + 1, pcs + r.depth, copy->words[i]) != pcs + r.depth) copy->words[i] += delta;
  }
  copy->ip += delta;
  const TableWalkResult moved = unwinder->Unwind(kOther, *copy, moved_pcs, GP_MAX_STACK_DEPTH);
  EXPECT_EQ(moved.stop, r.stop) << static_cast<int>(moved.stop);
  ASSERT_EQ(moved.depth, r.depth);
  for (int i = 0; i < r.depth; ++i) EXPECT_EQ(moved_pcs[i], pcs[i] + delta) << i;
  EXPECT_EQ(unwinder->tables_built(), built);
}

TEST(SampleUnwinder, AWalkNeverWaitsForATable) {
  // The first walk of a fresh unwinder needs the table of this test's own file: it asks
  // for it and stops (kPending) instead of building it; the table comes from the
  // unwinder's thread, and the same copy then unwinds whole.
  auto unwinder = UnwinderOfThisProcess();
  auto copy = std::make_unique<gp_user_stack_copy>();
  uint64_t caller = 0;
  CopyOwnStack(copy.get(), &caller);
  uint64_t pcs[GP_MAX_STACK_DEPTH];
  const auto pid = static_cast<uint32_t>(getpid());
  const TableWalkResult first = unwinder->Unwind(pid, *copy, pcs, GP_MAX_STACK_DEPTH);
  EXPECT_EQ(first.stop, TableWalkStop::kPending);
  EXPECT_EQ(first.depth, 1);  // the interrupted instruction, in a module without its table
  const TableWalkResult later = UnwindBuilt(*unwinder, pid, *copy, pcs);
  EXPECT_TRUE(later.complete() || later.stop == TableWalkStop::kEndOfCopy)
      << static_cast<int>(later.stop);
  EXPECT_GE(later.depth, 4);
  EXPECT_GE(unwinder->tables_built(), 1u);
}

TEST(SampleUnwinder, UnknownProcessesAndEmptyCopiesAreNotWalked) {
  SampleUnwinder unwinder;
  auto copy = std::make_unique<gp_user_stack_copy>();
  uint64_t pcs[GP_MAX_STACK_DEPTH];
  copy->size = 64;
  copy->sp = 0x7000;
  EXPECT_EQ(unwinder.Unwind(1, *copy, pcs, GP_MAX_STACK_DEPTH).depth, 0);
}

TEST(SampleUnwinder, GarbageCopiesEndWithoutAFault) {
  // A copy of the real stack with words replaced at random by code addresses, stack
  // addresses and noise, and registers at random: every walk ends, inside the copy.
  auto unwinder = UnwinderOfThisProcess();
  auto real = std::make_unique<gp_user_stack_copy>();
  uint64_t caller = 0;
  CopyOwnStack(real.get(), &caller);
  auto copy = std::make_unique<gp_user_stack_copy>();
  std::mt19937_64 random(3);
  uint64_t pcs[GP_MAX_STACK_DEPTH];
  const uint32_t pid = static_cast<uint32_t>(getpid());
  UnwindBuilt(*unwinder, pid, *real, pcs);  // the tables of the real stack's modules, built
  for (int round = 0; round < 3000; ++round) {
    std::memcpy(copy.get(), real.get(), sizeof(*copy));
    copy->size = static_cast<uint32_t>(random() % (GP_STACK_COPY_BYTES + 64));
    const size_t words = std::min<size_t>(real->size, GP_STACK_COPY_BYTES) / 8;
    for (int i = 0; i < 200 && words > 0; ++i) {
      uint64_t& word = copy->words[random() % words];
      switch (random() % 3) {
        case 0:
          word = caller + random() % 4096 - 2048;
          break;
        case 1:
          word = real->sp + random() % (2 * GP_STACK_COPY_BYTES);
          break;
        default:
          word = random();
          break;
      }
    }
    if (round % 2 == 0) copy->ip = caller + random() % 256;
    if (round % 3 == 0) copy->bp = random();
    if (round % 5 == 0) copy->sp = random();
    const TableWalkResult r = unwinder->Unwind(pid, *copy, pcs, GP_MAX_STACK_DEPTH);
    ASSERT_LE(r.depth, GP_MAX_STACK_DEPTH);
  }
}

}  // namespace
}  // namespace gpuperf::ebpf
