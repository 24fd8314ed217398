// Capturing the CPU call stack of the calling thread, cheaply enough to do it at every
// kernel launch, from inside a CUPTI API callback.
//
// The fast unwinder is libunwind's unw_backtrace (it caches the CFI it parsed), loaded
// with dlopen(RTLD_LOCAL): libunwind.so.8 also exports weak `backtrace` and
// `_Unwind_Backtrace`, which would interpose on the whole process if it were a NEEDED
// library. Where libunwind is absent we fall back to libgcc's _Unwind_Backtrace (about 15x
// slower: it re-parses the CFI every call).
//
// PCs are stored raw. Every PC that CaptureStack returns is a return address (it drops its
// own frame), which points one instruction after the call; the symbolizer looks up pc-1
// (src/symbolize/symbolizer.h, SymbolizeOptions::innermost_is_return_address).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/record_defaults.h"

namespace gpuperf {

enum class UnwinderKind : uint8_t {
  kNone = 0,
  kLibunwind = 1,       // unw_backtrace from libunwind.so.8 (dlopen'ed)
  kLibgcc = 2,          // _Unwind_Backtrace (libgcc_s)
  kGlibcBacktrace = 3,  // glibc backtrace(): only for comparison in benchmarks
};

// Deepest stack CaptureStack returns; deeper stacks are cut (their outermost frames lost).
// The most --max-stack-depth / GPUPERF_STACK_DEPTH accept (base/record_defaults.h).
inline constexpr int kMaxCapturedFrames = static_cast<int>(kMaxStackDepth);

// Picks the unwinder: libunwind when it loads, otherwise _Unwind_Backtrace. Call once,
// before the first CaptureStack (CaptureStack calls it itself when nobody did). Returns
// the kind chosen. Never prints; safe to call again (later calls return the first choice).
UnwinderKind InitUnwinder();

// Forces one unwinder (benchmarks, tests). Returns false, changing nothing, when it is not
// available. Not meant to race with CaptureStack on other threads.
bool UseUnwinder(UnwinderKind kind);

// Writes the return addresses of the calling thread, innermost first, starting with the
// one into CaptureStack's caller, and returns how many (0 when unwinding failed).
// Allocation-free after the first call on a thread; no locks with libunwind
// (per-thread cache), libgcc's unwinder takes its own lock briefly.
int CaptureStack(uint64_t* pcs, int max_depth);

// Follows the chain of saved frame pointers (rbp) from the caller's frame, writing return
// addresses like CaptureStack (the first is the one into the caller). About 1 ns per frame,
// against 7 for libunwind, but only right where every function on the way keeps a frame
// record: a function without one hides its caller. Reads only inside the calling thread's
// stack (bounds from pthread_getattr_np, once per thread), so it cannot fault; returns 0
// when the bounds are unknown.
int FramePointerWalk(uint64_t* pcs, int max_depth);

// The calling thread's stack, [*low, *high): asked once per thread (pthread_getattr_np reads
// /proc/self/maps for the main thread), then read from a thread-local. False when unknown.
// Both stack walkers read only inside it, so they cannot fault.
bool ThreadStackBounds(uintptr_t* low, uintptr_t* high);

// "libunwind", "libgcc", "glibc-backtrace" or "none".
const char* UnwinderName();
UnwinderKind CurrentUnwinder();

// Drops the innermost frames that belong to our own library, CUPTI or the CUDA driver
// (the frames between the application's call and our callback), so a stack begins at the
// application's call into CUDA. Configure once (module table snapshot), then Trim from any
// thread: a scan of a few ranges per frame, no allocation, no locks.
class FrameFilter {
 public:
  // Basename prefixes of the modules whose leading frames are dropped.
  static const std::vector<std::string_view>& DefaultSkipPrefixes();

  void Clear() { count_ = 0; }
  // Adds [start, end) as a skip range. Returns false when the table is full.
  bool AddRange(uint64_t start, uint64_t end);
  // Adds every module of `modules` whose basename starts with one of `prefixes`.
  // ModuleT needs .path, .start and .end (LoadedModule from module_table.h).
  template <class ModuleT>
  int Configure(const std::vector<ModuleT>& modules, const std::vector<std::string_view>& prefixes);

  bool Skips(uint64_t pc) const {
    for (int i = 0; i < count_; ++i) {
      if (pc >= ranges_[i].start && pc < ranges_[i].end) return true;
    }
    return false;
  }
  // Index of the first frame to keep: the first that is in no skip range.
  int FirstKept(const uint64_t* pcs, int depth) const {
    int i = 0;
    while (i < depth && Skips(pcs[i])) ++i;
    return i;
  }
  // Moves the kept frames to the front; returns the new depth.
  int Trim(uint64_t* pcs, int depth) const;
  int range_count() const { return count_; }

  static bool BasenameHasPrefix(std::string_view path,
                                const std::vector<std::string_view>& prefixes);

 private:
  static constexpr int kMaxRanges = 32;
  struct Range {
    uint64_t start, end;
  };
  Range ranges_[kMaxRanges] = {};
  int count_ = 0;
};

template <class ModuleT>
int FrameFilter::Configure(const std::vector<ModuleT>& modules,
                           const std::vector<std::string_view>& prefixes) {
  int added = 0;
  for (const ModuleT& m : modules) {
    if (BasenameHasPrefix(m.path, prefixes) && AddRange(m.start, m.end)) ++added;
  }
  return added;
}

}  // namespace gpuperf
