#include "unwind/table_unwinder.h"

#include <atomic>
#include <cstring>

#include "unwind/table_walk.h"
#include "unwind/unwinder.h"

namespace gpuperf {
namespace {

// Per thread: the rule cache. Zero-initialized, so that reaching it needs no
// initialization call. The stack's bounds come from ThreadStackBounds (unwinder.h), which
// the frame-pointer walk shares.
struct ThreadState {
  PcRuleCache rules;
};
thread_local ThreadState t_state;
std::atomic<bool> g_use_rule_cache{true};

}  // namespace

const char* TableWalkStopName(TableWalkStop stop) {
  switch (stop) {
    case TableWalkStop::kOutermost:
      return "outermost frame";
    case TableWalkStop::kMaxDepth:
      return "max depth";
    case TableWalkStop::kNoTables:
      return "no tables";
    case TableWalkStop::kNoStackBounds:
      return "no stack bounds";
    case TableWalkStop::kUnknownModule:
      return "unknown module";
    case TableWalkStop::kNoEhFrame:
      return "module without .eh_frame";
    case TableWalkStop::kNoRow:
      return "no FDE";
    case TableWalkStop::kUnexpressible:
      return "unexpressible rule";
    case TableWalkStop::kBadFrame:
      return "frame outside the stack";
    case TableWalkStop::kPending:
      return "table not built yet";
    case TableWalkStop::kEndOfCopy:
      return "end of the stack's copy";
    case TableWalkStop::kStopFrame:
      return "frame asked to stop after";
  }
  return "?";
}

bool InitTableUnwinder() {
  ProcessUnwindTables().Refresh();
  const UnwindSnapshot* snapshot = ProcessUnwindTables().snapshot();
  if (snapshot == nullptr) return false;
  for (const UnwindModule& m : snapshot->modules) {
    if (m.table->status == ModuleTableStatus::kOk) return true;
  }
  return false;
}

int RefreshTableUnwinder() {
  return ProcessUnwindTables().Refresh();
}

void UseTableRuleCache(bool use) {
  g_use_rule_cache.store(use, std::memory_order_relaxed);
}

TableWalkResult WalkWithTables(const UnwindSnapshot& snapshot, FrameRegisters start,
                               StackRange stack, uint64_t* pcs, int max_depth, PcRuleCache* cache,
                               CodeRange stop_after) {
  return WalkStackWithTables<false>(RuntimeRules{snapshot}, start, stack, InPlaceStack(), pcs,
                                    max_depth, cache, stop_after);
}

PcRuleCache* ThreadRuleCache(const UnwindSnapshot* snapshot) {
  if (!g_use_rule_cache.load(std::memory_order_relaxed)) return nullptr;
  PcRuleCache* cache = &t_state.rules;
  if (cache->snapshot != snapshot) {
    std::memset(static_cast<void*>(cache->entries), 0, sizeof(cache->entries));
    cache->snapshot = snapshot;
  }
  return cache;
}

// Called by the assembly entry below with the caller's registers as they were at the call.
extern "C" __attribute__((visibility("hidden"), used)) int gpuperf_table_walk_from(
    uint64_t* pcs, int max_depth, TableWalkResult* result, const CodeRange* stop_after,
    uint64_t rip, uint64_t rsp, uint64_t rbp) {
  TableWalkResult local;
  TableWalkResult& out = result != nullptr ? *result : local;
  out = TableWalkResult();
  out.at_stop = {rip, rsp, rbp};
  const UnwindSnapshot* snapshot = ProcessUnwindTables().snapshot();
  if (snapshot == nullptr || max_depth <= 0) {
    out.stop = max_depth <= 0 ? TableWalkStop::kMaxDepth : TableWalkStop::kNoTables;
    return 0;
  }
  StackRange stack;
  uintptr_t stack_low = 0, stack_high = 0;
  if (!ThreadStackBounds(&stack_low, &stack_high)) {
    out.stop = TableWalkStop::kNoStackBounds;
    return 0;
  }
  stack.low = stack_low;
  stack.high = stack_high;
  out = WalkWithTables(*snapshot, {rip, rsp, rbp}, stack, pcs, max_depth, ThreadRuleCache(snapshot),
                       stop_after != nullptr ? *stop_after : CodeRange{});
  return out.depth;
}

#if defined(__x86_64__)
// gpuperf_table_capture_stack(pcs, max_depth, result, stop_after): at entry, (%rsp) is the
// return address into the caller, the caller's RSP is 8 above, and RBP is still the
// caller's. They go to gpuperf_table_walk_from as its 5th-7th arguments, the 7th on the
// stack (pushed once, which also keeps RSP 16-byte aligned at the call); the first four
// arrive in place.
asm(R"(
  .pushsection .text
  .p2align 4
  .globl gpuperf_table_capture_stack
  .type gpuperf_table_capture_stack, @function
gpuperf_table_capture_stack:
  .cfi_startproc
  movq (%rsp), %r8
  leaq 8(%rsp), %r9
  pushq %rbp
  .cfi_adjust_cfa_offset 8
  call gpuperf_table_walk_from
  addq $8, %rsp
  .cfi_adjust_cfa_offset -8
  ret
  .cfi_endproc
  .size gpuperf_table_capture_stack, .-gpuperf_table_capture_stack
  .popsection
)");
#else
extern "C" int gpuperf_table_capture_stack(uint64_t*, int, TableWalkResult* result,
                                           const CodeRange*) {
  if (result != nullptr) *result = TableWalkResult();  // kNoTables: not on this architecture
  return 0;
}
#endif

namespace {

struct VerifyCounters {
  std::atomic<uint64_t> stacks{0}, agreeing{0}, fallbacks{0}, frames_compared{0},
      frames_mismatched{0};
  std::atomic<uint64_t> stops[kTableWalkStopCount] = {};
};
VerifyCounters g_verify;

void Count(const UnwindComparison& c) {
  g_verify.stacks.fetch_add(1, std::memory_order_relaxed);
  if (c.agrees()) g_verify.agreeing.fetch_add(1, std::memory_order_relaxed);
  if (!c.table.complete()) g_verify.fallbacks.fetch_add(1, std::memory_order_relaxed);
  g_verify.frames_compared.fetch_add(static_cast<uint64_t>(c.compared), std::memory_order_relaxed);
  g_verify.frames_mismatched.fetch_add(static_cast<uint64_t>(c.mismatches),
                                       std::memory_order_relaxed);
  g_verify.stops[static_cast<int>(c.table.stop)].fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

__attribute__((noinline)) UnwindComparison CompareWithLibunwind(int max_depth) {
  UnwindComparison c;
  if (max_depth > kMaxCapturedFrames) max_depth = kMaxCapturedFrames;
  InitUnwinder();
  c.libunwind_available = CurrentUnwinder() == UnwinderKind::kLibunwind;
  if (!c.libunwind_available || max_depth <= 0) return c;
  uint64_t table_pcs[kMaxCapturedFrames];
  uint64_t libunwind_pcs[kMaxCapturedFrames];
  TableCaptureStack(table_pcs, max_depth, &c.table);
  c.libunwind_depth = CaptureStack(libunwind_pcs, max_depth);
  for (int i = 1; i < c.table.depth; ++i) {
    ++c.compared;
    if (i >= c.libunwind_depth || table_pcs[i] != libunwind_pcs[i]) {
      if (c.first_mismatch < 0) c.first_mismatch = i;
      ++c.mismatches;
    }
  }
  if (c.table.complete() && c.table.depth != c.libunwind_depth) {
    c.depth_differs = true;
    if (c.first_mismatch < 0) c.first_mismatch = std::min(c.table.depth, c.libunwind_depth);
  }
  Count(c);
  return c;
}

UnwindVerifyCounts ReadUnwindVerifyCounts() {
  UnwindVerifyCounts counts;
  counts.stacks = g_verify.stacks.load(std::memory_order_relaxed);
  counts.agreeing = g_verify.agreeing.load(std::memory_order_relaxed);
  counts.fallbacks = g_verify.fallbacks.load(std::memory_order_relaxed);
  counts.frames_compared = g_verify.frames_compared.load(std::memory_order_relaxed);
  counts.frames_mismatched = g_verify.frames_mismatched.load(std::memory_order_relaxed);
  for (int i = 0; i < kTableWalkStopCount; ++i) {
    counts.stops[i] = g_verify.stops[i].load(std::memory_order_relaxed);
  }
  return counts;
}

}  // namespace gpuperf
