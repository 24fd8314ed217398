#include "inject/stack/table_unwinder.h"

#include <atomic>
#include <cstring>

#include "inject/stack/unwinder.h"

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
std::atomic<bool> g_use_prefetch{true};

// A word at `address` lies in the stack at or above the frame's RSP: safe to read.
bool InFrame(uint64_t address, const FrameRegisters& regs, StackRange stack) {
  return address >= regs.rsp && address <= stack.high - 8;
}

uint64_t LoadWord(uint64_t address) {
  uint64_t value;
  std::memcpy(&value, reinterpret_cast<const void*>(address), sizeof(value));
  return value;
}

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

void UseTableWalkPrefetch(bool use) {
  g_use_prefetch.store(use, std::memory_order_relaxed);
}

namespace {

// An instruction the compiler keeps: GCC 12 dropped a loop of __builtin_prefetch from
// gpuperf_table_walk_from when built with -fPIC. A prefetch never faults.
inline void PrefetchLine(const void* address) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address);
#endif
}

}  // namespace

// Out of line: inlined into gpuperf_table_walk_from, the loop recomputed the address of the
// thread-local cache (a __tls_get_addr call in a shared library) at every prefetch.
__attribute__((noinline)) void PcRuleCache::PrefetchPrevious() {
  for (int i = 0; i < remembered; ++i) {
    PrefetchLine(SetFor(remembered_pcs[i]));
    PrefetchLine(reinterpret_cast<const void*>(remembered_slots[i]));
  }
}

void PcRuleCache::Clear(const UnwindSnapshot* for_snapshot) {
  std::memset(static_cast<void*>(entries), 0, sizeof(entries));
  remembered = 0;
  snapshot = for_snapshot;
}

namespace {

// The rule for a frame whose return address is `rip`, or a reason to stop. `*table` is the
// module of the frame before (a hint) and then this frame's.
bool FindRule(const UnwindSnapshot& snapshot, uint64_t rip, const ModuleUnwindTable** table,
              UnwindRule* rule, TableWalkStop* stop) {
  // A return address points after its call, possibly at the next function: look up pc-1.
  const uint64_t lookup = rip - 1;
  // Callers are often in the same module: try the last frame's first.
  const ModuleUnwindTable* module = *table;
  if (module == nullptr || lookup - module->start >= module->end - module->start) {
    module = snapshot.Find(lookup);
    *table = module;
  }
  if (module == nullptr) {
    *stop = TableWalkStop::kUnknownModule;
    return false;
  }
  if (module->status != ModuleTableStatus::kOk) {
    *stop = module->status == ModuleTableStatus::kPending ? TableWalkStop::kPending
                                                          : TableWalkStop::kNoEhFrame;
    return false;
  }
  const UnwindRule* found = module->Find(lookup);
  if (found == nullptr) {
    *stop = TableWalkStop::kNoRow;
    return false;
  }
  *rule = *found;
  return true;
}

}  // namespace

TableWalkResult WalkWithTables(const UnwindSnapshot& snapshot, FrameRegisters start,
                               StackRange stack, uint64_t* pcs, int max_depth, PcRuleCache* cache) {
  TableWalkResult result;
  FrameRegisters regs = start;
  int depth = 0;
  TableWalkStop stop = TableWalkStop::kMaxDepth;
  const ModuleUnwindTable* table = nullptr;
  if (regs.rsp < stack.low || regs.rsp >= stack.high) {
    stop = TableWalkStop::kBadFrame;
    max_depth = 0;
  }
  while (depth < max_depth) {
    if (regs.rip == 0) {  // a zero return address ends the chain (as it does for libunwind)
      stop = TableWalkStop::kOutermost;
      break;
    }
    pcs[depth++] = regs.rip;
    UnwindRule rule;
    PcRuleCache::Entry* set = cache != nullptr ? cache->SetFor(regs.rip) : nullptr;
    if (set == nullptr || !PcRuleCache::Find(set, regs.rip, &rule)) {
      if (!FindRule(snapshot, regs.rip, &table, &rule, &stop)) break;
      if (set != nullptr) PcRuleCache::Insert(set, regs.rip, rule);
    }
    if (rule.cfa == CfaKind::kNoInfo) {
      stop = TableWalkStop::kNoRow;
      break;
    }
    uint64_t cfa = 0;
    switch (rule.cfa) {
      case CfaKind::kRsp:
        cfa = regs.rsp + static_cast<int64_t>(rule.cfa_offset);
        break;
      case CfaKind::kRbp:
        cfa = regs.rbp + static_cast<int64_t>(rule.cfa_offset);
        break;
      case CfaKind::kPlt:
        cfa = regs.rsp + 8 + ((regs.rip & 15) >= static_cast<uint64_t>(rule.cfa_offset) ? 8 : 0);
        break;
      case CfaKind::kRbpDeref: {  // a realigned frame: the CFA is kept in a slot of it
        const uint64_t slot = regs.rbp + static_cast<int64_t>(rule.cfa_offset);
        if (!InFrame(slot, regs, stack)) {
          stop = TableWalkStop::kBadFrame;
          break;
        }
        cfa = LoadWord(slot);
        break;
      }
      case CfaKind::kOutermost:
        stop = TableWalkStop::kOutermost;
        break;
      default:
        stop = TableWalkStop::kUnexpressible;
        break;
    }
    if (stop != TableWalkStop::kMaxDepth) break;
    // The caller's frame lies above this one: the return address slot [cfa-8, cfa) must be
    // at or above RSP and inside the stack. Unsigned compares also reject wrapped values.
    if (cfa < regs.rsp + 8 || cfa > stack.high) {
      stop = TableWalkStop::kBadFrame;
      break;
    }
    if (cache != nullptr && depth <= PcRuleCache::kRememberedFrames) {
      cache->remembered_slots[depth - 1] = cfa - 8;
    }
    uint64_t rbp = regs.rbp;
    if (rule.rbp != RbpKind::kSame) {
      const uint64_t base = rule.rbp == RbpKind::kSaved ? cfa : regs.rbp;
      const uint64_t saved_at = base + static_cast<int64_t>(rule.rbp_offset);
      if (!InFrame(saved_at, regs, stack)) {
        stop = TableWalkStop::kBadFrame;
        break;
      }
      rbp = LoadWord(saved_at);
    }
    regs = {LoadWord(cfa - 8), cfa, rbp};
  }
  if (cache != nullptr) {
    // The last frame may have no slot (the walk stopped there): the one left from an earlier
    // walk is only a wasted prefetch.
    const int remembered =
        depth < PcRuleCache::kRememberedFrames ? depth : PcRuleCache::kRememberedFrames;
    std::memcpy(cache->remembered_pcs, pcs, sizeof(uint64_t) * static_cast<size_t>(remembered));
    cache->remembered = remembered;
  }
  result.depth = depth;
  result.stop = stop;
  result.at_stop = regs;
  return result;
}

// Called by the assembly entry below with the caller's registers as they were at the call.
extern "C" __attribute__((visibility("hidden"), used)) int gpuperf_table_walk_from(
    uint64_t* pcs, int max_depth, TableWalkResult* result, uint64_t rip, uint64_t rsp,
    uint64_t rbp) {
  TableWalkResult local;
  TableWalkResult& out = result != nullptr ? *result : local;
  out = TableWalkResult();
  out.at_stop = {rip, rsp, rbp};
  const UnwindSnapshot* snapshot = ProcessUnwindTables().snapshot();
  if (snapshot == nullptr || max_depth <= 0) {
    out.stop = max_depth <= 0 ? TableWalkStop::kMaxDepth : TableWalkStop::kNoTables;
    return 0;
  }
  ThreadState& state = t_state;
  PcRuleCache* cache = nullptr;
  if (g_use_rule_cache.load(std::memory_order_relaxed)) {
    cache = &state.rules;
    if (cache->snapshot != snapshot) cache->Clear(snapshot);
    // First, so that the lines arrive while the stack bounds are read.
    if (g_use_prefetch.load(std::memory_order_relaxed)) cache->PrefetchPrevious();
  }
  StackRange stack;
  uintptr_t stack_low = 0, stack_high = 0;
  if (!ThreadStackBounds(&stack_low, &stack_high)) {
    out.stop = TableWalkStop::kNoStackBounds;
    return 0;
  }
  stack.low = stack_low;
  stack.high = stack_high;
  out = WalkWithTables(*snapshot, {rip, rsp, rbp}, stack, pcs, max_depth, cache);
  return out.depth;
}

#if defined(__x86_64__)
// gpuperf_table_capture_stack(pcs, max_depth, result): at entry, (%rsp) is the return
// address into the caller, the caller's RSP is 8 above, and RBP is still the caller's. They
// go to gpuperf_table_walk_from as its 4th-6th arguments; the jump leaves no frame of ours.
asm(R"(
  .pushsection .text
  .p2align 4
  .globl gpuperf_table_capture_stack
  .type gpuperf_table_capture_stack, @function
gpuperf_table_capture_stack:
  .cfi_startproc
  movq (%rsp), %rcx
  leaq 8(%rsp), %r8
  movq %rbp, %r9
  jmp gpuperf_table_walk_from
  .cfi_endproc
  .size gpuperf_table_capture_stack, .-gpuperf_table_capture_stack
  .popsection
)");
#else
extern "C" int gpuperf_table_capture_stack(uint64_t*, int, TableWalkResult* result) {
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
  if (max_depth > kMaxStackDepth) max_depth = kMaxStackDepth;
  InitUnwinder();
  c.libunwind_available = CurrentUnwinder() == UnwinderKind::kLibunwind;
  if (!c.libunwind_available || max_depth <= 0) return c;
  uint64_t table_pcs[kMaxStackDepth];
  uint64_t libunwind_pcs[kMaxStackDepth];
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
