#include "unwind/table_builder.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <mutex>

#include "unwind/unwind_table.h"

namespace gpuperf {
namespace {

// Bumped to wake the builder; it sleeps in FUTEX_WAIT on this word.
std::atomic<uint32_t> g_wake{0};
// A capture met a PC in no known module: rescan before compiling.
std::atomic<bool> g_rescan_asked{false};
std::atomic<uint64_t> g_tables_built{0};
std::atomic<bool> g_idle{false};  // SetTableBuilderIdle
std::once_flag g_start_once;
bool g_started = false;
UnwindTables::CompiledFn g_on_compiled = nullptr;

constexpr long kIdleWaitMs = 1000;  // the periodic look at the loader's counts
// A PC in no module at all (JIT code) asks for a rescan on every stack; one each this
// often is plenty.
constexpr long kRescanGapMs = 100;

timespec Milliseconds(long ms) {
  return {ms / 1000, (ms % 1000) * 1000000};
}

// Waits until `word` moves from `seen`, or `timeout_ms` (0: no timeout).
void FutexWait(std::atomic<uint32_t>* word, uint32_t seen, long timeout_ms) {
  const timespec timeout = Milliseconds(timeout_ms);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, seen,
          timeout_ms != 0 ? &timeout : nullptr, nullptr, 0);
}

void Wake() {
  g_wake.fetch_add(1, std::memory_order_release);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&g_wake), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr,
          0);
}

void* BuilderMain(void*) {
  // Our own thread: the application's signals are not ours to take.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  UnwindTables& tables = ProcessUnwindTables();
  for (;;) {
    const uint32_t seen = g_wake.load(std::memory_order_acquire);
    const bool rescan_asked = g_rescan_asked.load(std::memory_order_acquire);
    tables.Rescan();  // cheap unless a library came or went
    g_tables_built.fetch_add(
        static_cast<uint64_t>(tables.CompilePending(/*only_wanted=*/true, g_on_compiled)),
        std::memory_order_relaxed);
    if (rescan_asked) {
      const timespec gap = Milliseconds(kRescanGapMs);
      nanosleep(&gap, nullptr);
      g_rescan_asked.store(false, std::memory_order_release);
    }
    FutexWait(&g_wake, seen, g_idle.load(std::memory_order_acquire) ? 0 : kIdleWaitMs);
  }
  return nullptr;
}

}  // namespace

bool StartTableBuilder(UnwindTables::CompiledFn on_compiled) {
  std::call_once(g_start_once, [on_compiled] {
    g_on_compiled = on_compiled;
    ProcessUnwindTables().Rescan(/*force=*/true);
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    g_started = pthread_create(&thread, &attr, BuilderMain, nullptr) == 0;
    pthread_attr_destroy(&attr);
    if (g_started) pthread_setname_np(thread, "gpuperf-unwind");
  });
  return g_started;
}

void RequestTables(const uint64_t* pcs, int depth) {
  const UnwindSnapshot* snapshot = ProcessUnwindTables().snapshot();
  bool asked = false;
  for (int i = 0; i < depth; ++i) {
    // A return address belongs to the call before it (the walk looks up pc-1 too).
    const ModuleUnwindTable* table = snapshot != nullptr ? snapshot->Find(pcs[i] - 1) : nullptr;
    if (table == nullptr) {
      if (!g_rescan_asked.load(std::memory_order_relaxed) &&
          !g_rescan_asked.exchange(true, std::memory_order_acq_rel)) {
        asked = true;
      }
    } else if (table->status == ModuleTableStatus::kPending && !table->IsWanted()) {
      table->MarkWanted();
      asked = true;
    }
  }
  if (asked) Wake();
}

void SetTableBuilderIdle(bool idle) {
  g_idle.store(idle, std::memory_order_release);
  if (!idle) Wake();
}

uint64_t TablesBuilt() {
  return g_tables_built.load(std::memory_order_relaxed);
}

}  // namespace gpuperf
