// The engine of the table walk (table_unwinder.h), shared by two readers of a stack:
//  - the injection library's capture, which reads its own thread's stack in place
//    (InPlaceStack), and
//  - the CPU profiler's recorder (src/ebpf/sample_unwinder.h), which reads a copy of another
//    process's stack that a BPF program took at a sample (CopiedStack): the bytes of the
//    addresses [low, high) lie at copy[0, high - low).
// A template over the reader, so that the capture's loads stay plain loads (no offset, no
// indirect call): WalkWithTables is this with InPlaceStack, compiled as before.
//
// Header-only, and it includes nothing of the library's state (its tables are given), so
// that offline code may include it (tests/e2e/layering_test.sh lists it).
#pragma once

#include <cstdint>
#include <cstring>

#include "unwind/table_unwinder.h"
#include "unwind/unwind_table.h"

namespace gpuperf {

// The calling thread's own stack: an address is read where it is.
struct InPlaceStack {
  static constexpr bool kCopy = false;
  uint64_t Load(uint64_t address) const {
    uint64_t value;
    std::memcpy(&value, reinterpret_cast<const void*>(address), sizeof(value));
    return value;
  }
};

// A copy of a stack: the word at address `a` is at bytes + (a - base). The walk's bounds
// (StackRange) must be [base, base + size of the copy): every read is checked against them
// first. `more_above`: the stack goes on above the copy (it was cut at its size limit, not
// at the stack's end), so a frame beyond it ends the walk with kEndOfCopy, not kBadFrame.
struct CopiedStack {
  static constexpr bool kCopy = true;
  const uint8_t* bytes = nullptr;
  uint64_t base = 0;
  bool more_above = false;
  uint64_t Load(uint64_t address) const {
    uint64_t value;
    std::memcpy(&value, bytes + (address - base), sizeof(value));
    return value;
  }
};

namespace table_walk_internal {

// A word at `address` lies in the stack at or above the frame's RSP: safe to read.
inline bool InFrame(uint64_t address, const FrameRegisters& regs, StackRange stack) {
  return address >= regs.rsp && address <= stack.high - 8;
}

}  // namespace table_walk_internal

// What a walk may report as it goes, for a caller that must know which stack words and
// registers its result depended on (the launch-stack memo, stack_memo.h). The default does
// nothing and compiles away.
//  - Loaded: a word read from the stack; `rbp` when it becomes the caller's RBP (which then
//    matters only if a later frame uses RBP).
//  - UsedRbp: the walk computed something from the current RBP (a CFA, a slot's address).
struct NoWalkObserver {
  void Loaded(uint64_t /*address*/, uint64_t /*value*/, bool /*rbp*/) {}
  void UsedRbp() {}
};

// Where the walk finds rules: `Find(lookup, &rule, &stop)` gives the rule that covers
// `lookup` (a return address minus one, or an interrupted instruction), or a reason to
// stop. These are the injection library's tables, built where its modules are loaded; the
// recorder's (src/ebpf/sample_unwinder.h) are built once per file and placed per process.
struct RuntimeRules {
  const UnwindSnapshot& snapshot;
  const ModuleUnwindTable* hint = nullptr;  // the module of the frame before

  bool Find(uint64_t lookup, UnwindRule* rule, TableWalkStop* stop) {
    // Callers are often in the same module: try the last frame's first.
    const ModuleUnwindTable* module = hint;
    if (module == nullptr || lookup - module->start >= module->end - module->start) {
      module = snapshot.Find(lookup);
      hint = module;
    }
    if (module == nullptr) {
      *stop = TableWalkStop::kUnknownModule;
      return false;
    }
    return FindInTable(*module, lookup, rule, stop);
  }

  // The rule of `lookup` (an address in the table's own terms) in a module's table.
  static bool FindInTable(const ModuleUnwindTable& module, uint64_t lookup, UnwindRule* rule,
                          TableWalkStop* stop) {
    if (module.status != ModuleTableStatus::kOk) {
      *stop = module.status == ModuleTableStatus::kPending ? TableWalkStop::kPending
                                                           : TableWalkStop::kNoEhFrame;
      return false;
    }
    const UnwindRule* found = module.Find(lookup);
    if (found == nullptr) {
      *stop = TableWalkStop::kNoRow;
      return false;
    }
    *rule = *found;
    return true;
  }
};

// WalkWithTables (table_unwinder.h) over any reader and any rules (RuntimeRules).
// kFirstInterrupted: start.rip is the interrupted instruction itself (a sample), not a return
// address, so its own row is looked up, not the one of the instruction before it; the later frames
// are return addresses. The walk ends (kStopFrame) after the first frame whose lookup address lies
// in `stop_after`.
template <bool kFirstInterrupted, class Stack, class Rules, class Observer = NoWalkObserver>
__attribute__((always_inline)) inline TableWalkResult WalkStackWithTables(
    Rules rules, FrameRegisters start, StackRange stack, const Stack& memory, uint64_t* pcs,
    int max_depth, PcRuleCache* cache, CodeRange stop_after = {}, Observer* observer = nullptr) {
  using table_walk_internal::InFrame;
  TableWalkResult result;
  FrameRegisters regs = start;
  int depth = 0;
  TableWalkStop stop = TableWalkStop::kMaxDepth;
  if (regs.rsp < stack.low || regs.rsp >= stack.high) {
    stop = TableWalkStop::kBadFrame;
    max_depth = 0;
  }
  while (depth < max_depth) {
    if (regs.rip == 0) {  // a zero return address ends the chain (as it does for libunwind)
      stop = TableWalkStop::kOutermost;
      break;
    }
    // A return address points after its call, possibly at the next function: look up pc-1.
    const bool interrupted = kFirstInterrupted && depth == 0;
    const uint64_t lookup = interrupted ? regs.rip : regs.rip - 1;
    pcs[depth++] = regs.rip;
    if (stop_after.Contains(lookup)) {
      stop = TableWalkStop::kStopFrame;
      break;
    }
    UnwindRule rule;
    // The cache is keyed by return address: an interrupted PC's rule is not cached.
    PcRuleCache::Entry* set = cache != nullptr && !interrupted ? cache->SetFor(regs.rip) : nullptr;
    if (set == nullptr || !PcRuleCache::Find(set, regs.rip, &rule)) {
      if (!rules.Find(lookup, &rule, &stop)) break;
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
        if (observer != nullptr) observer->UsedRbp();
        cfa = regs.rbp + static_cast<int64_t>(rule.cfa_offset);
        break;
      case CfaKind::kPlt:
        cfa = regs.rsp + 8 + ((regs.rip & 15) >= static_cast<uint64_t>(rule.cfa_offset) ? 8 : 0);
        break;
      case CfaKind::kRbpDeref: {  // a realigned frame: the CFA is kept in a slot of it
        if (observer != nullptr) observer->UsedRbp();
        const uint64_t slot = regs.rbp + static_cast<int64_t>(rule.cfa_offset);
        if (!InFrame(slot, regs, stack)) {
          stop = TableWalkStop::kBadFrame;
          break;
        }
        cfa = memory.Load(slot);
        if (observer != nullptr) observer->Loaded(slot, cfa, false);
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
      if constexpr (Stack::kCopy) {
        if (memory.more_above && cfa >= regs.rsp + 8) stop = TableWalkStop::kEndOfCopy;
      }
      break;
    }
    uint64_t rbp = regs.rbp;
    if (rule.rbp != RbpKind::kSame) {
      if (observer != nullptr && rule.rbp != RbpKind::kSaved) observer->UsedRbp();
      const uint64_t base = rule.rbp == RbpKind::kSaved ? cfa : regs.rbp;
      const uint64_t saved_at = base + static_cast<int64_t>(rule.rbp_offset);
      if (!InFrame(saved_at, regs, stack)) {
        stop = TableWalkStop::kBadFrame;
        break;
      }
      rbp = memory.Load(saved_at);
      if (observer != nullptr) observer->Loaded(saved_at, rbp, true);
    }
    const uint64_t return_address = memory.Load(cfa - 8);
    if (observer != nullptr) observer->Loaded(cfa - 8, return_address, false);
    regs = {return_address, cfa, rbp};
  }
  result.depth = depth;
  result.stop = stop;
  result.at_stop = regs;
  return result;
}

}  // namespace gpuperf
