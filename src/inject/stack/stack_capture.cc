// The launch-stack path: unwind, trim the frames of gpuperf, CUPTI, the driver and the
// runtime (FrameFilter), intern (StackTable, a lock-free lookup for stacks seen before).
//
// Unwinding is most of a launch's stack cost (15-35 frames), so three unwinders are tried
// in turn (docs/recording.md "How stacks are unwound"; GPUPERF_UNWIND picks a subset):
//
// 1. Frame pointers (~1 ns a frame). That walk is exact only where every function on the
// way keeps a frame record: one without hides its caller. So the first time a frame-pointer
// stack is seen, libunwind unwinds too, and the verdict is kept with the frame-pointer
// stack: the same (verified) stack id from then on, or "unwind another way" when they
// differed (e.g. PyTorch's libraries, built without frame pointers). A match proves that
// each function on the way had a frame record at those very return addresses, which is a
// property of the code, so every later walk with the same addresses is exact too. One
// allowance: the walk may stop short of the outermost frames when those are C library
// thread-start code built without frame pointers (__libc_start_main, start_thread, clone3,
// as on Debian) and the program's _start; libunwind's longer stack is kept for it. Those
// frames are always the same below a given frame, and never call back into the program.
//
// 2. The .eh_frame tables (table_unwinder.h, ~7 ns a frame), compiled in the background
// for the modules that launch stacks run through (table_builder.h). A walk that cannot
// finish (a table not built yet, a rule the tables do not hold) hands the whole stack to
// libunwind; the reason is counted.
//
// 3. libunwind, which handles everything else.
//
// Before all three: the thread's stack memo (stack_memo.h). A launch repeated from the same
// place, with the same registers at the capture, the same stack words where the table walk
// read them and the same Python frames, gets the stack id the tables gave the first time,
// without unwinding or interning. Only table-walked stacks are memoized: frame-pointer
// stacks cost little already, and libunwind's cannot be checked this way.
//
// Python: the calling thread's CPython frames are walked (inject/python, no GIL, no Python
// calls) and appended to the native PCs as tagged words (gpuperf/python_frame_word.h)
// before interning, so one stack id names both. Only the native part is ever compared with
// libunwind. The Python frames are walked first: a thread that has them gets its native
// stack cut after the innermost eval-loop frame (_PyEval_EvalFrameDefault). Every native
// frame further out is the interpreter's call machinery between Python frames (hidden by
// every output, which replaces each eval frame by the Python frames it ran), the
// interpreter's start-up, or, rarely, C code between two Python frames; the Python frames
// left over go outermost (analyze/symbols/python_stacks.h), so the stack reads as before. On a
// PyTorch launch that is about half the native frames, each ~30 ns of table walk and
// interning in a process whose own work evicts the caches between launches
// (docs/performance.md). GPUPERF_NATIVE_STACKS=full (record --full-native-stacks) keeps them.
#include "inject/stack/stack_capture.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/auxv.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "cpython/python_code_record.h"
#include "gpuperf/python_frame_word.h"
#include "gpuperf/stack_marker.h"
#include "inject/log.h"
#include "inject/python/python_frames.h"
#include "inject/stack/module_table.h"
#include "inject/stack/stack_memo.h"
#include "inject/stack/stack_table.h"
#include "inject/stack/unwind_verify.h"
#include "inject/stats.h"
#include "unwind/table_builder.h"
#include "unwind/table_unwinder.h"
#include "unwind/unwinder.h"

namespace gpuperf::inject {
namespace {

constexpr int kMaxRawDepth = 256 + 32;  // room for the frames the filter trims
// After the native PCs: the thread's Python frames, and for a backward launch a marker and
// its forward op's Python frames (InheritedPythonWords).
constexpr int kMaxTailWords = 2 * kMaxPythonFrames + 1;
uint32_t g_max_depth = 64;
FrameFilter g_filter;
StackTable* g_table = nullptr;

// Frame-pointer stacks (trimmed) and, per id, the verdict: 0 = not checked yet,
// kUnwindOtherwise, or the id of the same stack in g_table.
constexpr uint32_t kMaxFramePointerStacks = 1u << 18;
constexpr uint32_t kUnwindOtherwise = UINT32_MAX;
constexpr int kMaxLibcTail = 4;
constexpr int kMaxTrimmedFrames = 32;
StackTable* g_fp_table = nullptr;   // null: no frame-pointer walk
uint32_t* g_fp_verdicts = nullptr;  // accessed through atomic_ref
FrameFilter g_libc;                 // the C library's code, for the outermost frames
uint64_t g_entry = 0;               // the program's entry point (_start)
bool g_tables = false;              // walk the .eh_frame tables (the builder runs)
bool g_verify = false;              // GPUPERF_UNWIND_VERIFY: libunwind checks every stack
bool g_python = false;              // append the thread's Python frames (where ready)
// Set by the benchmark hook (PausePythonFramesForBench) to time launches without them.
std::atomic<bool> g_python_paused{false};
// The eval loop's code: native stacks with Python frames end at its innermost frame. Empty
// when the interpreter has none we can find, or with GPUPERF_NATIVE_STACKS=full.
CodeRange g_eval_loop;
// Set by the benchmark hook (PauseNativeCutForBench) to time launches with whole stacks.
std::atomic<bool> g_cut_paused{false};
// The launch-stack memo (stack_memo.h): with the tables, unless GPUPERF_STACK_MEMO=off.
bool g_memo = false;
std::atomic<bool> g_memo_paused{false};  // PauseStackMemoForBench

bool IsThreadStartFrame(uint64_t pc) {
  return g_libc.Skips(pc) || (pc > g_entry && pc - g_entry < 64);
}

// _PyEval_EvalFrameDefault's code, or an empty range. At init only (dlsym takes the loader's
// lock). The symbol's size comes with its ELF symbol; a build that split the function
// (a `.cold` part) has launches cut only at frames in the hot part, which is where it calls.
CodeRange FindEvalLoop() {
  void* function = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
  Dl_info info;
  void* entry = nullptr;
  if (function == nullptr || dladdr1(function, &info, &entry, RTLD_DL_SYMENT) == 0) return {};
  const auto* symbol = static_cast<const ElfW(Sym)*>(entry);
  if (symbol == nullptr || symbol->st_size == 0) return {};
  const auto begin = reinterpret_cast<uint64_t>(function);
  return {begin, begin + symbol->st_size};
}

// Ends a trimmed stack after its first frame in `cut_after` (a return address: the call
// before it is in the range).
int CutAfter(const CodeRange& cut_after, const uint64_t* pcs, int depth) {
  for (int i = 0; i < depth; ++i) {
    if (cut_after.Contains(pcs[i] - 1)) return i + 1;
  }
  return depth;
}

// Drops the leading frames of gpuperf, CUPTI and CUDA, ends the stack after its first frame
// in `cut_after` (when given), and keeps at most g_max_depth.
int TrimAndCut(uint64_t* pcs, int depth, const CodeRange* cut_after) {
  depth = g_filter.Trim(pcs, depth);
  if (cut_after != nullptr) depth = CutAfter(*cut_after, pcs, depth);
  return depth < static_cast<int>(g_max_depth) ? depth : static_cast<int>(g_max_depth);
}

// How many frames each unwinder gets: room for the ones the filter trims, and never more
// than libunwind takes (kMaxCapturedFrames), so that all three cut a deep stack alike.
int RawDepth() {
  const int depth = static_cast<int>(g_max_depth) + 32;
  return depth < kMaxCapturedFrames ? depth : kMaxCapturedFrames;
}

// libunwind's stack. With `request_tables` (the table walk stopped for want of tables), the
// modules of the whole stack, trimmed frames included, are handed to the table builder.
int LibunwindTrimmed(uint64_t* pcs, const CodeRange* cut_after, bool request_tables = false) {
  const int raw = CaptureStack(pcs, RawDepth());
  if (request_tables) RequestTables(pcs, raw);
  return TrimAndCut(pcs, raw, cut_after);
}

// The stack from the .eh_frame tables, or -1 when the walk could not finish (`walk->stop`
// says why). The walk starts in our own frames, which the tables cover like any other's;
// it stops by itself at the frame to cut after, never walking the frames beyond, so its
// stack needs no CutAfter (the walk and CutAfter test the same address, a return address
// minus one).
int TableTrimmed(uint64_t* pcs, TableWalkResult* walk, const CodeRange* cut_after) {
  const int raw = TableCaptureStack(pcs, RawDepth(), walk, cut_after);
  if (!walk->complete()) return -1;
  return TrimAndCut(pcs, raw, nullptr);
}

bool StoppedForWantOfTables(TableWalkStop stop) {
  return stop == TableWalkStop::kPending || stop == TableWalkStop::kUnknownModule ||
         stop == TableWalkStop::kNoTables;
}

void CountTableFallback(TableWalkStop stop) {
  switch (stop) {
    case TableWalkStop::kNoTables:
    case TableWalkStop::kPending:
    case TableWalkStop::kUnknownModule:
    case TableWalkStop::kNoEhFrame:
    case TableWalkStop::kNoRow:
      CountStat(StatId::table_fallback_no_table);
      break;
    default:
      CountStat(StatId::table_fallback_rule);
      break;
  }
}

// `depth` comes from TrimAndCut (plus Python frames).
StackId Intern(const uint64_t* pcs, int depth) {
  if (depth <= 0 || g_table == nullptr) return 0;
  bool inserted = false;
  StackId id = g_table->Intern(pcs, depth, &inserted);
  if (id == 0) {
    CountStat(StatId::stack_table_full);
  } else if (inserted) {
    CountStat(StatId::unique_stacks);
  }
  return id;
}

// The stack from frame pointers when they are known to be right for it; 0 otherwise. When
// this call had to check with libunwind, `*libunwind_depth` says how many frames of its
// stack are in `pcs`.
StackId FromFramePointers(uint64_t* pcs, int* libunwind_depth, const CodeRange* cut_after) {
  uint64_t fp_pcs[kMaxRawDepth];
  const int fp_depth = TrimAndCut(fp_pcs, FramePointerWalk(fp_pcs, RawDepth()), cut_after);
  if (fp_depth <= 0) return 0;
  const StackId fp_id = g_fp_table->Intern(fp_pcs, fp_depth);
  if (fp_id == 0 || fp_id >= kMaxFramePointerStacks) return 0;
  std::atomic_ref<uint32_t> verdict(g_fp_verdicts[fp_id]);
  const uint32_t known = verdict.load(std::memory_order_acquire);
  if (known == kUnwindOtherwise) return 0;
  if (known != 0) return known;
  // First sight: check against libunwind. Two threads may both check; they agree.
  const int raw = CaptureStack(pcs, RawDepth());
  // The frames the filter trims (ours, CUPTI's, the driver's), kept in case the tables are
  // needed: their modules' tables are walked too.
  uint64_t trimmed[kMaxTrimmedFrames];
  const int trimmed_depth = std::min(g_filter.FirstKept(pcs, raw), kMaxTrimmedFrames);
  if (g_tables) std::memcpy(trimmed, pcs, sizeof(uint64_t) * static_cast<size_t>(trimmed_depth));
  const int depth = TrimAndCut(pcs, raw, cut_after);
  *libunwind_depth = depth;
  bool same = depth >= fp_depth && depth - fp_depth <= kMaxLibcTail &&
              std::memcmp(pcs, fp_pcs, sizeof(uint64_t) * static_cast<size_t>(fp_depth)) == 0;
  for (int i = fp_depth; same && i < depth; ++i) same = IsThreadStartFrame(pcs[i]);
  if (!same && g_tables) {  // the tables will be tried next time: have them built
    RequestTables(trimmed, trimmed_depth);
    RequestTables(pcs, depth);
  }
  const StackId id = same ? Intern(pcs, depth) : 0;  // the native stack alone
  verdict.store(id != 0 ? id : kUnwindOtherwise, std::memory_order_release);
  CountStat(id != 0 ? StatId::fp_stacks_verified : StatId::fp_stacks_rejected);
  return id;
}

// Verify mode: libunwind's stack for the same launch, compared with `pcs`.
void CheckWithLibunwind(const uint64_t* pcs, int depth, StackSource source,
                        const CodeRange* cut_after) {
  uint64_t reference[kMaxRawDepth];
  const int reference_depth = LibunwindTrimmed(reference, cut_after);
  CountStat(StatId::unwind_verified);
  const int differs_at = FirstDifference(pcs, depth, reference, reference_depth);
  if (differs_at < 0) return;
  CountStat(StatId::unwind_disagreements);
  LogDisagreementOnce(source == StackSource::kTable ? "table" : "frame-pointer", pcs, depth,
                      reference, reference_depth, differs_at);
}

// The native stack into pcs[0, return value), by the first unwinder that can (see the top),
// ending after its first frame in `cut_after` when given. A frame-pointer stack also sets
// `*fp_id`, its interned id; its PCs are copied out only when the caller needs them
// (`need_pcs`) and returns 0 otherwise.
int UnwindNative(uint64_t* pcs, bool need_pcs, const CodeRange* cut_after, StackSource* source,
                 StackId* fp_id) {
  int depth = -1;  // libunwind's trimmed depth, once it ran
  if (g_fp_table != nullptr) {
    if (StackId id = FromFramePointers(pcs, &depth, cut_after)) {
      *fp_id = id;
      *source = StackSource::kFramePointers;
      if (depth >= 0) return depth;  // just checked: libunwind's stack is in pcs
      if (!need_pcs && !g_verify) return 0;
      depth = g_table->Copy(id, pcs, kMaxRawDepth);
      if (g_verify) CheckWithLibunwind(pcs, depth, StackSource::kFramePointers, cut_after);
      return depth;
    }
  }
  *source = StackSource::kLibunwind;
  if (depth >= 0) return depth;  // the frame-pointer check already ran libunwind
  if (g_tables) {
    TableWalkResult walk;
    depth = TableTrimmed(pcs, &walk, cut_after);
    if (depth >= 0) {
      *source = StackSource::kTable;
      if (g_verify) CheckWithLibunwind(pcs, depth, StackSource::kTable, cut_after);
      return depth;
    }
    CountTableFallback(walk.stop);
    NoteFallbackOnce(walk, g_verify);
    return LibunwindTrimmed(pcs, cut_after, StoppedForWantOfTables(walk.stop));
  }
  return LibunwindTrimmed(pcs, cut_after);
}

// The calling thread's Python frames (innermost first) as tagged words into words[0..n);
// returns n. A thread without a Python thread state has none (the walker counts it).
int PythonFrameWords(uint64_t* words) {
  PyFrameSample samples[kMaxPythonFrames];
  const int n = WalkPythonFrames(samples, kMaxPythonFrames);
  if (n <= 0) return 0;
  uint32_t code_ids[kMaxPythonFrames];
  InternPythonFrames(samples, n, code_ids);  // a failure leaves id 0, counted by the walker
  for (int i = 0; i < n; ++i) {
    words[i] = MakePythonFrameWord(code_ids[i], samples[i].instr_offset,
                                   (samples[i].flags & kPyFrameEntry) != 0,
                                   PyFrameIsGenerator(samples[i].flags));
  }
  return n;
}

// What a backward launch inherits from its forward op's stack `from` (0: nothing):
// kAutogradForwardWord, then that stack's Python frames (the thread's own ones: a forward
// stack never inherits), into words[0..n); returns n. Nothing when the stack has no Python
// frames: its native frames would say less than the backward launch's own.
int InheritedPythonWords(StackId from, uint64_t* words) {
  if (from == 0 || g_table == nullptr) return 0;
  uint64_t forward[kMaxRawDepth + kMaxPythonFrames];
  const int depth = g_table->Copy(from, forward, kMaxRawDepth + kMaxPythonFrames);
  int n = 0;
  for (int i = 0; i < depth && n < kMaxPythonFrames; ++i) {
    if (forward[i] == kAutogradForwardWord) break;
    if (IsPythonFrameWord(forward[i])) words[1 + n++] = forward[i];
  }
  if (n == 0) return 0;
  words[0] = kAutogradForwardWord;
  return n + 1;
}

void PythonNotice(const char* line) {
  LogOnce("%s", line);
}

// The table builder's thread, after each table (GPUPERF_LOG=verbose).
void TableCompiled(const ModuleUnwindTable& table, uint64_t ns) {
  const char* slash = std::strrchr(table.name.c_str(), '/');
  const char* name = slash != nullptr ? slash + 1 : table.name.c_str();
  LogVerbose("unwind table for %s: %s, %zu rows (%u unexpressible), %.1f ms",
             *name != '\0' ? name : "the program", ModuleTableStatusName(table.status),
             table.row_starts.size(), table.stats.unexpressible_rows,
             static_cast<double>(ns) / 1e6);
}

StatId MissStat(MemoMiss miss) {
  switch (miss) {
    case MemoMiss::kPython:
      return StatId::stack_memo_miss_python;
    case MemoMiss::kWords:
      return StatId::stack_memo_miss_words;
    default:
      return StatId::stack_memo_miss_registers;
  }
}

// Keeps a table-walked launch stack in the thread's memo (stack_memo.h): walks once more
// from the memo's key, recording the words the walk depends on, and keeps the entry only if
// that walk gives the same native frames (the capture's own frames trimmed) as `native`.
void Memoize(const StackMemoKey& key, const uint64_t* native, int depth, StackId id) {
  uint64_t raw[kMaxRawDepth];
  int raw_depth = RecordMemoWalk(key, raw, RawDepth(), key.cut ? &g_eval_loop : nullptr);
  if (raw_depth < 0) {
    CountStat(StatId::stack_memo_not_kept);
    return;
  }
  raw_depth = TrimAndCut(raw, raw_depth, nullptr);
  if (raw_depth == depth &&
      std::memcmp(raw, native, sizeof(uint64_t) * static_cast<size_t>(depth)) == 0) {
    CommitMemoizedStack(id);
    CountStat(StatId::stack_memo_entries);
  } else {
    CountStat(StatId::stack_memo_not_kept);
  }
}

}  // namespace

void InitStackCapture(const StackCaptureOptions& options) {
  g_max_depth = options.max_depth < 256 ? options.max_depth : 256;
  g_verify = options.verify;
  InitUnwinder();
  static bool initialized = false;
  if (!initialized) {
    initialized = true;
    ModuleTable modules;
    modules.Refresh();
    // Configured once, before callbacks are enabled: the filter is read unsynchronized.
    g_filter.Configure(modules.modules(), FrameFilter::DefaultSkipPrefixes());
    g_libc.Configure(modules.modules(), {"libc.so", "libc-"});
    g_entry = getauxval(AT_ENTRY);
    static StackTable table;
    g_table = &table;
    // At init, never in a callback: the probe takes the dynamic loader's lock.
    // Without an interpreter a walk costs one atomic load, so g_python follows the setting.
    g_python = options.python;
    if (options.python) {
      const PythonFramesState state = InitPythonFrames(PythonNotice);
      if (state == PythonFramesState::kReady) {
        const uint32_t version = PythonFramesVersion();
        if (options.cut_at_python) g_eval_loop = FindEvalLoop();
        LogVerbose("Python frames in launch stacks (CPython %u.%u); native frames %s",
                   version >> 24, (version >> 16) & 0xff,
                   g_eval_loop.empty() ? "in full" : "up to the innermost eval loop");
      }
    }
  }
  g_fp_table = nullptr;
  if (WalksFramePointers(options.unwind)) {
    static StackTable fp_table(StackTableOptions{kMaxFramePointerStacks, (16ull << 20) / 8});
    // calloc: the kernel hands out zeroed pages as they are first touched.
    if (g_fp_verdicts == nullptr) {
      g_fp_verdicts = static_cast<uint32_t*>(std::calloc(kMaxFramePointerStacks, sizeof(uint32_t)));
    }
    if (fp_table.ok() && g_fp_verdicts != nullptr) g_fp_table = &fp_table;
  }
  g_tables = WalksTables(options.unwind) && StartTableBuilder(TableCompiled);
  g_memo = g_tables && options.memo;
  InvalidateStackMemos();  // the depth, the unwinders or the Python settings may differ now
}

void InitStackCapture(uint32_t max_depth, bool frame_pointers, bool python) {
  StackCaptureOptions options;
  options.max_depth = max_depth;
  options.unwind = frame_pointers ? UnwindMode::kFramePointers : UnwindMode::kLibunwind;
  options.python = python;
  InitStackCapture(options);
}

const char* StackUnwinderName() {
  if (g_tables && g_fp_table != nullptr) return "frame pointers, .eh_frame tables, then libunwind";
  if (g_tables) return ".eh_frame tables, then libunwind";
  if (g_fp_table != nullptr) return "frame pointers, then libunwind";
  return UnwinderName();
}

void PausePythonFramesForBench(bool paused) {
  g_python_paused.store(paused, std::memory_order_relaxed);
}

void PauseNativeCutForBench(bool paused) {
  g_cut_paused.store(paused, std::memory_order_relaxed);
}

void PauseStackMemoForBench(bool paused) {
  g_memo_paused.store(paused, std::memory_order_relaxed);
}

// Not inlined: the memo's key is the registers at one fixed call in this function, and a
// walk from there must pass through the same frames each time.
__attribute__((noinline)) StackId CaptureLaunchStack(StackSource* source, bool* memo_hit,
                                                     StackId inherit_from) {
  StackMemoKey key;
  const bool memo = g_memo && !g_memo_paused.load(std::memory_order_relaxed);
  if (memo) gpuperf_caller_registers(&key.at);
  uint64_t pcs[kMaxRawDepth + kMaxTailWords];
  StackSource how = StackSource::kNone;
  StackId fp_id = 0;
  // The words after the native PCs: the thread's Python frames, then, for a backward
  // launch, the marker and its forward op's Python frames.
  uint64_t python[kMaxTailWords];
  int python_depth = 0;
  if (g_python && !g_python_paused.load(std::memory_order_relaxed)) {
    python_depth = PythonFrameWords(python);
  }
  // Cut only where Python frames stand in for what is cut: a walk that found none (a
  // thread without a thread state, a refused or broken walk) keeps the whole native stack.
  const bool cut =
      python_depth > 0 && !g_eval_loop.empty() && !g_cut_paused.load(std::memory_order_relaxed);
  const int tail_depth = python_depth + InheritedPythonWords(inherit_from, python + python_depth);
  key.python = python;
  key.python_depth = tail_depth;
  key.cut = cut;
  MemoMiss miss = MemoMiss::kRegisters;
  StackId memoized = memo ? FindMemoizedStack(key, *g_table, &miss) : 0;
  if (memo && memoized == 0) CountStat(MissStat(miss));
  if (memoized != 0 && !g_verify) {
    if (source != nullptr) *source = StackSource::kTable;  // only table stacks are memoized
    if (memo_hit != nullptr) *memo_hit = true;
    return memoized;
  }
  int depth = UnwindNative(pcs, tail_depth > 0, cut ? &g_eval_loop : nullptr, &how, &fp_id);
  if (fp_id != 0) {
    if (source != nullptr) *source = how;
    // The native stack is known (interned alone when it was checked: a stack the trace
    // then holds even if only its Python variants are linked); its Python frames are not.
    // None to add: the same id.
    if (tail_depth == 0) return fp_id;
  } else if (depth <= 0) {
    CountStat(StatId::unwind_failed);
    depth = 0;
    how = StackSource::kNone;
  }
  if (source != nullptr) *source = how;
  std::memcpy(pcs + depth, python, sizeof(uint64_t) * static_cast<size_t>(tail_depth));
  const StackId id = Intern(pcs, depth + tail_depth);
  if (memoized != 0) {  // verify mode: the memo's answer against the unwinders'
    CountStat(StatId::stack_memo_checked);
    if (memoized != id) {
      CountStat(StatId::stack_memo_disagreements);
      LogOnce("unwind check: the stack memo gave stack %u where unwinding gives %u", memoized, id);
    }
  } else if (memo && how == StackSource::kTable && id != 0) {
    Memoize(key, pcs, depth, id);
  }
  return id;
}

StackId InternMarkerStack(uint64_t word) {
  return Intern(&word, 1);
}

void DrainNewStacks(std::vector<StackRecord>& out, uint32_t pid) {
  if (g_table != nullptr) g_table->DrainNew(pid, out);
}

void RewindStackDrains() {
  if (g_table != nullptr) g_table->RewindDrain();
  if (g_python) RewindPythonCodeDrain();
}

void DrainNewPythonCodeRecords(std::vector<PythonCodeRecord>& out, uint32_t pid, NameTable& names) {
  if (!g_python) return;
  std::vector<PyCodeInfo> codes;
  DrainNewPythonCodes(codes);
  for (PyCodeInfo& code : codes) {
    const uint32_t id = code.id;
    out.push_back(MakePythonCodeRecord(
        pid, id, std::move(code), [&](const std::string& text) { return names.Intern(text); }));
  }
}

void UpdatePythonStats() {
  if (!g_python) return;
  const PythonFramesCounters c = GetPythonFramesCounters();
  SetStat(StatId::python_codes, c.codes);
  SetStat(StatId::python_no_thread_state, c.no_thread_state);
  SetStat(StatId::python_refused, c.refused);
  SetStat(StatId::python_truncated, c.truncated);
  SetStat(StatId::python_broken, c.broken);
  SetStat(StatId::python_skipped_frames, c.skipped_frames);
  SetStat(StatId::python_intern_failed, c.intern_failed);
  SetStat(StatId::python_unreadable_names, c.unreadable_names);
}

}  // namespace gpuperf::inject
