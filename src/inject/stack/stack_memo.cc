#include "inject/stack/stack_memo.h"

#include <pthread.h>

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "unwind/table_walk.h"
#include "unwind/unwinder.h"
#include "unwind/walk_dependencies.h"

namespace gpuperf::inject {
namespace {

// 512 sets of 2 ways: launch sites of a model's step number in the hundreds, and a set
// holds two of them before one evicts the other.
constexpr int kSetBits = 9;
constexpr int kWays = 2;
// Entries keep their recorded words in the thread's arena, a ring written in order: an
// entry is valid until the ring comes round to its words again. 32 Ki words (256 KiB) hold
// ~500 PyTorch launch stacks (~40 recorded words and their offsets each); the headers are
// 56 KiB. An entry's Python frame words are not copied: its stack, which ends with them, is
// in the stack table already.
constexpr uint64_t kArenaWords = 1u << 15;
// Fills are paused for a window of lookups after one with more fills than hits: a thread
// whose stacks do not repeat (or repeat over more places than the memo holds) would pay a
// second walk for every launch and gain nothing.
constexpr uint32_t kWindowLookups = 4096;
// A walk reads at most two words a frame (a saved RBP and the return address), three in a
// realigned one; this many are kept while walking, before the unneeded RBPs are dropped.
constexpr int kMaxRawReads = 2 * kMaxMemoReads;

struct MemoEntry {
  uint64_t rip = 0, rsp = 0, rbp = 0;
  uint64_t layout = 0;  // the unwind snapshot's (tables compiled since change no walk)
  // Where its words are in the arena (counted from the ring's first word ever written): the
  // recorded values, then their offsets from rsp, two a word.
  uint64_t words_at = 0;
  uint32_t epoch = 0;  // 0: empty or being filled; g_epoch is never 0
  StackId id = 0;
  uint32_t used = 0;  // the thread's clock at its last hit or fill: the older way is replaced
  uint16_t reads = 0;
  uint16_t python_depth = 0;
  bool rbp_needed = false;
  bool cut = false;
};

uint64_t WordsOf(int reads) {
  return static_cast<uint64_t>(reads) + static_cast<uint64_t>(reads + 1) / 2;
}

struct ThreadMemo {
  MemoEntry entries[kWays << kSetBits];
  uint64_t arena[kArenaWords];
  uint64_t arena_head = 0;       // words ever written
  MemoEntry* pending = nullptr;  // filled by RecordMemoWalk, valid after CommitMemoizedStack
  uint32_t pending_epoch = 0;
  uint32_t clock = 0;
  // The current window's counts (kWindowLookups), and whether the last one paused fills.
  uint32_t window_lookups = 0, window_fills = 0, window_hits = 0;
  bool fills_paused = false;

  // The entry's words, or null once the ring has written over them.
  const uint64_t* WordsFor(const MemoEntry& e) const {
    if (arena_head > e.words_at + kArenaWords) return nullptr;
    return &arena[e.words_at % kArenaWords];
  }
  // Room for `n` contiguous words (n <= kArenaWords); sets `*at`.
  uint64_t* Allocate(uint64_t n, uint64_t* at) {
    const uint64_t offset = arena_head % kArenaWords;
    if (offset + n > kArenaWords) arena_head += kArenaWords - offset;  // wrap: keep it whole
    *at = arena_head;
    arena_head += n;
    return &arena[*at % kArenaWords];
  }
};

std::atomic<uint32_t> g_epoch{1};

// Trivially destructible, so that it stays readable while thread-exit destructors run; the
// memo itself is freed by the key's destructor.
thread_local ThreadMemo* t_memo = nullptr;

void FreeMemo(void* memo) {
  if (t_memo == memo) t_memo = nullptr;
  std::free(memo);
}

pthread_key_t MemoKey() {
  static pthread_key_t key;
  static const bool created = pthread_key_create(&key, FreeMemo) == 0;
  return created ? key : static_cast<pthread_key_t>(-1);
}

// The thread's memo, made on its first memoized walk. calloc: the kernel hands out zeroed
// pages as they are first touched, and an all-zero entry is empty (epoch 0).
ThreadMemo* MemoOfThisThread() {
  if (t_memo != nullptr) return t_memo;
  const pthread_key_t key = MemoKey();
  if (key == static_cast<pthread_key_t>(-1)) return nullptr;
  auto* memo = static_cast<ThreadMemo*>(std::calloc(1, sizeof(ThreadMemo)));
  if (memo == nullptr) return nullptr;
  if (pthread_setspecific(key, memo) != 0) {
    std::free(memo);
    return nullptr;
  }
  t_memo = memo;
  return memo;
}

MemoEntry* SetFor(ThreadMemo& memo, const StackMemoKey& key) {
  uint64_t h = key.at.rsp ^ (uint64_t(key.python_depth) << 48);
  // Every Python word, each rotated by its place: launches from the same native frames
  // often share their innermost Python frames too (every nn.Linear's F.linear call, under
  // Module._call_impl; every backward launch's autograd marker) and differ further out,
  // and a hash of the innermost words alone put them all in one two-way set (session 12:
  // 30% of a training step's lookups missed that way). The rotations are independent of
  // each other, so this costs ~10 ns for 40 frames; a miss costs a walk, ~2-3 µs.
  uint64_t python = 0;
  for (int i = 0; i < key.python_depth; ++i) python ^= std::rotl(key.python[i], (i * 13) & 63);
  h ^= python * 0xff51afd7ed558ccdull;
  h *= 0x9e3779b97f4a7c15ull;
  return &memo.entries[kWays * (h >> (64 - kSetBits))];
}

// Whether every recorded word still holds its value: `values`, then their offsets from rsp,
// two a word (the even one in the low half).
bool SameWords(const uint64_t* values, int reads, uint64_t rsp) {
  const uint64_t* offsets = values + reads;
  for (int i = 0; i < reads; ++i) {
    const uint64_t offset = (offsets[i / 2] >> (32 * (i & 1))) & 0xffffffffu;
    uint64_t word;
    std::memcpy(&word, reinterpret_cast<const void*>(rsp + offset), sizeof(word));
    if (word != values[i]) return false;
  }
  return true;
}

using ReadRecorder = WalkDependencies<kMaxRawReads>;

}  // namespace

StackId FindMemoizedStack(const StackMemoKey& key, const StackTable& stacks, MemoMiss* why) {
  ThreadMemo* memo = t_memo;
  if (memo == nullptr) return 0;
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (++memo->window_lookups == kWindowLookups) {
    memo->fills_paused = memo->window_fills > memo->window_hits;
    memo->window_lookups = memo->window_fills = memo->window_hits = 0;
  }
  const UnwindSnapshot* snapshot = ProcessUnwindTables().snapshot();
  if (snapshot == nullptr) return 0;
  MemoEntry* set = SetFor(*memo, key);
  // Why a lookup missed: the furthest any way got.
  MemoMiss miss = MemoMiss::kRegisters;
  for (int way = 0; way < kWays; ++way) {
    MemoEntry& e = set[way];
    if (e.epoch != epoch || e.rsp != key.at.rsp || e.rip != key.at.rip ||
        e.python_depth != key.python_depth || e.cut != key.cut || e.layout != snapshot->layout ||
        (e.rbp_needed && e.rbp != key.at.rbp)) {
      continue;
    }
    const uint64_t* words = memo->WordsFor(e);
    if (words == nullptr) continue;
    if (e.python_depth > 0) {  // the stack's last words are its Python frames
      int depth = 0;
      const uint64_t* stack = stacks.Words(e.id, &depth);
      if (stack == nullptr || depth < e.python_depth ||
          std::memcmp(stack + (depth - e.python_depth), key.python,
                      sizeof(uint64_t) * e.python_depth) != 0) {
        if (miss == MemoMiss::kRegisters) miss = MemoMiss::kPython;
        continue;
      }
    }
    if (!SameWords(words, e.reads, key.at.rsp)) {
      miss = MemoMiss::kWords;
      continue;
    }
    e.used = ++memo->clock;
    ++memo->window_hits;
    return e.id;
  }
  if (why != nullptr) *why = miss;
  return 0;
}

int RecordMemoWalk(const StackMemoKey& key, uint64_t* pcs, int max_depth,
                   const CodeRange* stop_after) {
  const UnwindSnapshot* snapshot = ProcessUnwindTables().snapshot();
  uintptr_t low = 0, high = 0;
  if (snapshot == nullptr || !ThreadStackBounds(&low, &high)) return -1;
  ThreadMemo* memo = MemoOfThisThread();
  if (memo == nullptr || memo->fills_paused) return -1;
  memo->pending = nullptr;
  ++memo->window_fills;
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed);
  ReadRecorder recorder;
  const TableWalkResult walk = WalkStackWithTables<false>(
      RuntimeRules{*snapshot}, key.at, StackRange{low, high}, InPlaceStack(), pcs, max_depth,
      ThreadRuleCache(snapshot), stop_after != nullptr ? *stop_after : CodeRange{}, &recorder);
  if (!walk.complete() || recorder.overflow) return -1;
  int kept = 0;
  for (int i = 0; i < recorder.count; ++i) {
    const ReadRecorder::Read& read = recorder.reads[i];
    if (!read.needed) continue;
    // The walk reads only at or above the first frame's RSP, in the thread's stack.
    if (read.address < key.at.rsp || read.address - key.at.rsp > UINT32_MAX) return -1;
    ++kept;
  }
  if (kept > kMaxMemoReads) return -1;
  MemoEntry* set = SetFor(*memo, key);
  MemoEntry& e = set[0].used <= set[1].used ? set[0] : set[1];
  e.epoch = 0;
  uint64_t* values = memo->Allocate(WordsOf(kept), &e.words_at);
  uint64_t* offsets = values + kept;
  int n = 0;
  for (int i = 0; i < recorder.count; ++i) {
    const ReadRecorder::Read& read = recorder.reads[i];
    if (!read.needed) continue;
    values[n] = read.value;
    const uint64_t offset = read.address - key.at.rsp;
    offsets[n / 2] = (n & 1) != 0 ? offsets[n / 2] | offset << 32 : offset;
    ++n;
  }
  e.rip = key.at.rip;
  e.rsp = key.at.rsp;
  e.rbp = key.at.rbp;
  e.layout = snapshot->layout;
  e.reads = static_cast<uint16_t>(kept);
  e.python_depth = static_cast<uint16_t>(key.python_depth);
  e.rbp_needed = recorder.start_rbp_used;
  e.cut = key.cut;
  memo->pending = &e;
  memo->pending_epoch = epoch;
  return walk.depth;
}

void CommitMemoizedStack(StackId id) {
  ThreadMemo* memo = t_memo;
  if (memo == nullptr || memo->pending == nullptr || id == 0) return;
  MemoEntry& e = *memo->pending;
  memo->pending = nullptr;
  e.id = id;
  e.used = ++memo->clock;
  e.epoch = memo->pending_epoch;  // an invalidation since leaves it empty
}

void InvalidateStackMemos() {
  uint32_t next = g_epoch.load(std::memory_order_relaxed) + 1;
  if (next == 0) next = 1;
  g_epoch.store(next, std::memory_order_relaxed);
}

#if defined(__x86_64__)
static_assert(offsetof(FrameRegisters, rip) == 0 && offsetof(FrameRegisters, rsp) == 8 &&
              offsetof(FrameRegisters, rbp) == 16);
// gpuperf_caller_registers(out): at entry (%rsp) is the return address into the caller,
// whose stack pointer is 8 above; RBP is still the caller's.
asm(R"(
  .pushsection .text
  .p2align 4
  .globl gpuperf_caller_registers
  .type gpuperf_caller_registers, @function
gpuperf_caller_registers:
  .cfi_startproc
  movq (%rsp), %rax
  movq %rax, (%rdi)
  leaq 8(%rsp), %rax
  movq %rax, 8(%rdi)
  movq %rbp, 16(%rdi)
  ret
  .cfi_endproc
  .size gpuperf_caller_registers, .-gpuperf_caller_registers
  .popsection
)");
#else
extern "C" void gpuperf_caller_registers(FrameRegisters* out) {
  *out = FrameRegisters();
}
#endif

}  // namespace gpuperf::inject
