// A native unwinder that needs no frame pointers: each module's `.eh_frame` is compiled once
// into a sorted table of rows (unwind_table.h), and a capture walks the stack reading only
// those tables and the thread's own stack. x86-64 only.
//
// The walk starts from the registers of the function that called TableCaptureStack (an
// assembly entry reads its return address, stack pointer and RBP before anything can
// change them) and, per frame: finds the rule for pc-1 (every PC is a return address: the
// call before it is what the frame is executing), takes CFA = RSP or RBP + offset, reads
// the return address at CFA-8 and, where the rule says RBP was saved, the caller's RBP at
// CFA+offset; the caller's RSP is the CFA. Every read is checked to lie inside the calling
// thread's stack, above the previous frame, so it cannot fault and cannot loop. A rule is
// found in the thread's PcRuleCache (return address -> rule; launch stacks repeat) or else
// by a search for the module and then for the row in its table.
//
// When a frame cannot be unwound from the table (a row marked unexpressible, no row, a
// module without a table or not known yet, a CFA outside the stack), the walk stops and
// says why; the PCs it wrote are right, but the rest of the stack is missing. The caller
// then redoes the whole stack with libunwind (CaptureStack in unwinder.h). Resuming
// libunwind from the frame where the table stopped is not offered: that needs every
// callee-saved register at that frame, and the walk tracks only RSP and RBP. Stopping
// because of an unknown module means a library was loaded since the tables were built:
// call RefreshTableUnwinder() off the capture path (e.g. from the writer thread); call it
// too after a dlclose, since a library loaded later at the same addresses would otherwise
// be walked with the old one's rules (wrong PCs, never a fault).
//
// Use from the capture path (frames of our own library at the top are trimmed anyway):
//   TableWalkResult walk;
//   int depth = TableCaptureStack(pcs, max, &walk);
//   if (!walk.complete()) depth = CaptureStack(pcs, max);  // count walk.stop
//
// Nothing on the capture path allocates, locks or makes a system call, except on a
// thread's first capture: its thread-local state (stack bounds from pthread_getattr_np, as
// FramePointerWalk does, and a 32 KiB rule cache) is set up then. Building the tables
// allocates and takes the loader's lock: call InitTableUnwinder() at start-up (about 8 bytes
// and 90 ns per row: ~6 ms for a process with libc and libstdc++, 270 ms and 23 MB for one
// that also maps libLLVM, libcublasLt, libcudnn, libcufft and libnccl).
#pragma once

#include <cstdint>

#include "unwind/unwind_table.h"

namespace gpuperf {

// Why a walk ended.
enum class TableWalkStop : uint8_t {
  kOutermost = 0,      // reached the thread's first frame: the stack is complete
  kMaxDepth = 1,       // pcs is full (the stack may be deeper), as CaptureStack would cut it
  kNoTables = 2,       // InitTableUnwinder() never ran (or this is not x86-64)
  kNoStackBounds = 3,  // the calling thread's stack bounds are unknown
  kUnknownModule = 4,  // a PC in no module of the tables: refresh them, then fall back
  kNoEhFrame = 5,      // the PC's module has no usable .eh_frame
  kNoRow = 6,          // no FDE covers the PC (hand-written code, JIT code)
  kUnexpressible = 7,  // the PC's row needs libunwind (expressions, other CFA registers)
  kBadFrame = 8,       // a CFA or saved value outside the stack: the table or the stack is wrong
  kPending = 9,        // the PC's module is known but its table is not compiled yet
  kEndOfCopy = 10,     // a walk of a stack's copy (table_walk.h) reached the copy's end
  kStopFrame = 11,     // reached a frame in the range the caller asked to stop after
};
constexpr int kTableWalkStopCount = 12;

const char* TableWalkStopName(TableWalkStop stop);

struct FrameRegisters {
  uint64_t rip = 0, rsp = 0, rbp = 0;
};

// [low, high): the addresses the walk may read.
struct StackRange {
  uint64_t low = 0, high = 0;
};

// [begin, end) of code: a walk given one stops, complete, after the first frame whose PC
// (the instruction before a return address) lies in it. The launch-stack capture cuts a
// Python thread's native stack after its innermost eval-loop frame this way
// (stack_capture.cc): the interpreter frames further out are replaced by Python frames
// anyway. Empty (the default): never.
struct CodeRange {
  uint64_t begin = 0, end = 0;
  bool Contains(uint64_t pc) const { return pc - begin < end - begin; }
  bool empty() const { return end <= begin; }
};

struct TableWalkResult {
  int depth = 0;
  TableWalkStop stop = TableWalkStop::kNoTables;
  // Where the walk stopped: the registers of the frame whose PC is pcs[depth - 1] (or of
  // the first frame when depth is 0). For diagnostics.
  FrameRegisters at_stop;

  // True when the PCs are the whole stack (up to max_depth, or up to the frame asked to
  // stop after): no libunwind needed.
  bool complete() const {
    return stop == TableWalkStop::kOutermost || stop == TableWalkStop::kMaxDepth ||
           stop == TableWalkStop::kStopFrame;
  }
};

// The rules one thread looked up recently: a cache from return address to rule, so that a
// frame seen before costs one load instead of two searches (launch stacks repeat). Two ways
// per set, the most recent first, so that two PCs of one stack that hash alike do not evict
// each other on every capture. Valid for one snapshot: a capture that finds another
// snapshot clears it.
struct PcRuleCache {
  static constexpr int kSetBits = 10;
  struct Entry {
    uint64_t pc = 0;  // 0: empty (a walk never looks up PC 0)
    UnwindRule rule;
  };
  const UnwindSnapshot* snapshot = nullptr;
  Entry entries[2 << kSetBits];

  Entry* SetFor(uint64_t pc) {
    return &entries[2 * ((pc * 0x9e3779b97f4a7c15ull) >> (64 - kSetBits))];
  }
  static bool Find(const Entry* set, uint64_t pc, UnwindRule* rule) {
    for (int way = 0; way < 2; ++way) {
      if (set[way].pc == pc) {
        *rule = set[way].rule;
        return true;
      }
    }
    return false;
  }
  static void Insert(Entry* set, uint64_t pc, const UnwindRule& rule) {
    set[1] = set[0];
    set[0] = {pc, rule};
  }
};

// Builds the tables of every loaded module (ProcessUnwindTables). Allocates; takes the
// loader's lock; may take tens of milliseconds for very large libraries. Returns false when
// no module could be read.
bool InitTableUnwinder();
// Compiles the tables of modules loaded since; returns how many. Same costs as Init.
int RefreshTableUnwinder();

// Walks from `start` over `snapshot`, reading only inside `stack`. Writes pcs[0] = start.rip
// (which must be a return address) and one PC per caller frame after it. `cache`, when
// given, must belong to `snapshot`. The engine of TableCaptureStack, exposed for tests on
// synthetic stacks; table_walk.h has the same walk over a copy of a stack.
TableWalkResult WalkWithTables(const UnwindSnapshot& snapshot, FrameRegisters start,
                               StackRange stack, uint64_t* pcs, int max_depth,
                               PcRuleCache* cache = nullptr, CodeRange stop_after = {});

// Whether TableCaptureStack uses each thread's PcRuleCache (default on). For benchmarks and
// tests of the uncached lookup.
void UseTableRuleCache(bool use);

// The calling thread's PcRuleCache for `snapshot` (emptied when it held another's), or null
// while the cache is off. For another walk of the thread's own stack (stack_memo.h).
PcRuleCache* ThreadRuleCache(const UnwindSnapshot* snapshot);

// Default visibility, so that a test library can offer it to benchmarks; the injection
// library's version script keeps it local.
extern "C" int gpuperf_table_capture_stack(uint64_t* pcs, int max_depth, TableWalkResult* result,
                                           const CodeRange* stop_after);

// Writes the return addresses of the calling thread, innermost first, starting with the one
// into TableCaptureStack's caller (as CaptureStack does), and returns how many. `*result`
// says whether they are the whole stack; when not, the caller falls back to CaptureStack.
// With `stop_after`, the walk ends (complete, kStopFrame) after the first frame in it.
// No allocation, no locks.
__attribute__((always_inline)) inline int TableCaptureStack(uint64_t* pcs, int max_depth,
                                                            TableWalkResult* result,
                                                            const CodeRange* stop_after = nullptr) {
  return gpuperf_table_capture_stack(pcs, max_depth, result, stop_after);
}

// --- Verify mode: the table unwinder against libunwind on the same stack. ---

struct UnwindComparison {
  bool libunwind_available = false;
  TableWalkResult table;
  int libunwind_depth = 0;
  int compared = 0;            // frames compared (the table's frames after the first)
  int mismatches = 0;          // of those, how many differ from libunwind's
  int first_mismatch = -1;     // index of the first that differs (or of a depth difference)
  bool depth_differs = false;  // the table was complete but its depth is not libunwind's

  bool agrees() const { return libunwind_available && mismatches == 0 && !depth_differs; }
};

// Unwinds the calling thread with both (libunwind through CaptureStack, which must be the
// chosen unwinder) from inside this function, and compares them frame by frame. Frame 0 is
// each one's return address into this function (two call sites), so the comparison starts
// at frame 1, the return address into this function's caller. A table walk that fell back
// is compared on the frames it has. Adds to the process-wide counts (UnwindVerifyCounts).
// Not for every launch: it costs a libunwind capture.
UnwindComparison CompareWithLibunwind(int max_depth);

// What CompareWithLibunwind saw in this process so far.
struct UnwindVerifyCounts {
  uint64_t stacks = 0;     // comparisons made
  uint64_t agreeing = 0;   // stacks where every frame the table had matched
  uint64_t fallbacks = 0;  // stacks the table could not finish
  uint64_t frames_compared = 0;
  uint64_t frames_mismatched = 0;
  uint64_t stops[kTableWalkStopCount] = {};  // walks ended, by reason
};
UnwindVerifyCounts ReadUnwindVerifyCounts();

}  // namespace gpuperf
