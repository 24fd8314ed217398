// The launch-stack memo: each thread's launches from the same place give the same stack, so
// a launch whose registers and stack words are those of an earlier one reuses its stack id
// without unwinding or interning (stack_capture.cc).
//
// A table walk (table_walk.h) is a function of the registers it starts from, the stack words
// it reads and the rules. So when a walk is memoized, it is walked once more from a fixed
// point of the capture (the registers at gpuperf_caller_registers' call in
// CaptureLaunchStack), recording every word it read whose value its result depends on:
// each return address, each CFA slot, and a saved RBP only when a later frame computes
// something from it (code without frame pointers uses RBP as a plain register, whose saved
// values change from call to call without changing the stack). A later launch is a hit when
// it starts from the same registers (RBP only if the walk used it) with the same rules (no
// module has left since: UnwindSnapshot::layout), every recorded word still holds its value,
// and its Python frame words are those the memoized stack ends with: then the walk would read
// the same words and take the same steps, so its stack is the memoized one. The check is
// exact; no hash decides a hit.
//
// In PyTorch the launches of one decode step repeat at the same stack depth step after
// step, so after the first steps nearly every launch is a hit: one load and compare per
// recorded word (~40) and per Python frame, instead of a frame-pointer walk, a table walk
// through ~30 frames of libraries and interning (docs/performance.md).
//
// Per thread, made on its first memoized walk (~310 KiB: 1,024 entries in 512 sets of 2
// ways, whose recorded words share a 256 KiB ring: ~500 PyTorch launch stacks); nothing is
// shared between threads, nothing locks. A stack with more than kMaxMemoReads recorded words
// is not memoized, and a thread whose last 4,096 lookups made more entries than they found
// makes none for the next 4,096 (its stacks do not repeat, or over more places than the
// memo holds: a second walk each would buy nothing).
#pragma once

#include <cstdint>

#include "gpuperf/records.h"
#include "inject/stack/stack_table.h"
#include "unwind/table_unwinder.h"

namespace gpuperf::inject {

constexpr int kMaxMemoReads = 96;

// What must be equal for a hit, besides the stack words.
struct StackMemoKey {
  FrameRegisters at;                 // the capture's registers at its fixed point
  const uint64_t* python = nullptr;  // the launch's Python frame words
  int python_depth = 0;
  bool cut = false;  // the native stack ends at the innermost eval loop
};

// Why a lookup found nothing: no entry from the same registers (or none at all), an entry
// with other Python frames, an entry whose stack words changed.
enum class MemoMiss : uint8_t { kRegisters, kPython, kWords };

// The stack of an earlier launch with this key, or 0 (and `*why`, when given). Only the
// calling thread's memo. `stacks` holds the memoized stacks (interned there first): their
// Python words are compared where it keeps them.
StackId FindMemoizedStack(const StackMemoKey& key, const StackTable& stacks,
                          MemoMiss* why = nullptr);

// Walks the tables from `key.at` once more, recording what the walk depends on; its PCs go
// to pcs[0, return value) (untrimmed: the capture's own frames first). Returns -1 when the
// walk cannot be memoized (incomplete, too many words, no tables or memo memory). The entry
// becomes a hit only after CommitMemoizedStack: the caller first checks that these PCs give
// the stack it interned.
int RecordMemoWalk(const StackMemoKey& key, uint64_t* pcs, int max_depth,
                   const CodeRange* stop_after);
void CommitMemoizedStack(StackId id);

// Forget every entry of every thread (the settings that shape a stack changed). Cheap: an
// epoch that each entry carries.
void InvalidateStackMemos();

// The registers of the caller at the call: its return address, stack pointer after the
// return, and RBP (an assembly entry, x86-64; zeros elsewhere).
extern "C" void gpuperf_caller_registers(FrameRegisters* out);

}  // namespace gpuperf::inject
