#include "inject/cupti/window_edge.h"

#include <algorithm>
#include <atomic>

#include "inject/record_batch.h"

namespace gpuperf::inject {
namespace {

// One call per launching thread at most; past this many, the rest are kept (and unjoined).
constexpr uint32_t kMaxNoted = 1024;
std::atomic<bool> g_noting{false};
std::atomic<uint32_t> g_count{0};
std::atomic<uint32_t> g_ids[kMaxNoted];

bool Noted(uint32_t correlation_id, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    if (g_ids[i].load(std::memory_order_relaxed) == correlation_id) return true;
  }
  return false;
}

template <class Records>
uint64_t DropNoted(Records& records, uint32_t count) {
  const size_t before = records.size();
  records.erase(std::remove_if(records.begin(), records.end(),
                               [count](const auto& r) { return Noted(r.correlation_id, count); }),
                records.end());
  return before - records.size();
}

}  // namespace

void StartWindowEdge(bool on) {
  g_noting.store(false, std::memory_order_relaxed);
  for (auto& id : g_ids) id.store(0, std::memory_order_relaxed);
  g_count.store(0, std::memory_order_release);
  g_noting.store(on, std::memory_order_release);
}

void NoteCallBeforeWindow(uint32_t correlation_id) {
  if (correlation_id == 0 || !g_noting.load(std::memory_order_acquire)) return;
  const uint32_t slot = g_count.load(std::memory_order_relaxed);
  if (slot >= kMaxNoted) return;
  // Claim a slot, then fill it: a reader that sees the count before the id reads 0, which
  // no call has, and finds the id at its next buffer.
  uint32_t expected = slot;
  for (;;) {
    if (expected >= kMaxNoted) return;
    if (g_count.compare_exchange_weak(expected, expected + 1, std::memory_order_acq_rel)) break;
  }
  g_ids[expected].store(correlation_id, std::memory_order_release);
}

uint64_t DropCallsBeforeWindow(RecordBatch& batch) {
  const uint32_t count = g_count.load(std::memory_order_acquire);
  if (count == 0) return 0;
  return DropNoted(batch.kernels, count) + DropNoted(batch.memcpys, count) +
         DropNoted(batch.memsets, count) + DropNoted(batch.memories, count);
}

}  // namespace gpuperf::inject
