// Activity buffers as CUPTI 13 manages them: records go into client-provided buffers (asked for
// through the request callback, per thread by default), full buffers are handed back on CUPTI's
// own worker thread, cuptiActivityFlushAll hands back the rest on the calling thread, and a
// buffer holding an incomplete record waits for its timestamps unless the flush is forced.
#pragma once

#include <cupti.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace fake_cupti {

// Size of the record struct the fake writes for `kind` (0 if it writes none of that kind).
size_t RecordSize(CUpti_ActivityKind kind);

struct Buffer {
  uint8_t* data = nullptr;
  size_t size = 0;
  size_t begin = 0;  // first record offset (non-zero only for a misaligned client buffer)
  size_t used = 0;
  size_t max_records = 0;  // from the request callback; 0 = as many as fit
  size_t records = 0;
  std::vector<size_t> incomplete;  // offsets of kernel records still waiting for timestamps
};

struct BufferStats {
  std::atomic<uint64_t> requested{0}, completed{0}, completed_on_worker{0}, empty_returned{0},
      records_written{0}, records_delivered{0}, records_dropped{0}, incomplete_delivered{0},
      misaligned{0};
};

class BufferQueue {
 public:
  BufferQueue();

  void SetCallbacks(CUpti_BuffersCallbackRequestFunc request,
                    CUpti_BuffersCallbackCompleteFunc complete);
  bool HasCallbacks() const { return request_.load() != nullptr; }

  // Copies one record into the calling thread's buffer. Returns false if it was dropped.
  bool Append(const void* record, size_t size, bool incomplete);

  // cuptiActivityFlushAll: delivers, on the calling thread, every buffer holding records whose
  // records are all complete (or every one, when forced); returns after in-flight deliveries
  // from the worker are done too.
  void FlushAll(bool forced);
  // cuptiActivityFlushPeriod: 0 = deliver full buffers as soon as they fill up.
  void SetFlushPeriod(uint32_t ms);

  void CompletePending(uint64_t start, uint64_t end);
  void AddDropped(size_t n);
  size_t TakeDropped();  // cuptiActivityGetNumDroppedRecords: read and reset
  void SetPerThread(bool per_thread) { per_thread_ = per_thread; }
  bool PerThread() const { return per_thread_; }
  void SetZeroBuffers(bool zero) { zero_buffers_ = zero; }
  size_t PendingBuffers();

  // Drops every buffer without delivery and stops the worker (fake_cupti_reset, cuptiFinalize).
  void Reset();
  // pthread_atfork handlers: hold every lock across fork(); the child has no worker thread.
  void PrepareFork();
  void ParentAfterFork();
  void ChildAfterFork();

  BufferStats stats;

 private:
  struct Slot {
    std::mutex mu;
    std::unique_ptr<Buffer> current;
    std::vector<std::unique_ptr<Buffer>> spare;  // given by a request that lost a race
  };

  Slot* SlotForThisThread();
  std::unique_ptr<Buffer> RequestBuffer(size_t needed);
  // Moves a full buffer to the ready list (mu_ must not be held; slot mu held by caller).
  void MarkReady(std::unique_ptr<Buffer> buffer);
  void Deliver(std::unique_ptr<Buffer> buffer, bool on_worker);
  void EnsureWorker();
  void WorkerLoop(uint64_t generation);
  static bool IsComplete(const Buffer& buffer) { return buffer.incomplete.empty(); }

  std::atomic<CUpti_BuffersCallbackRequestFunc> request_{nullptr};
  std::atomic<CUpti_BuffersCallbackCompleteFunc> complete_{nullptr};
  std::atomic<bool> per_thread_{true};
  std::atomic<bool> zero_buffers_{true};
  std::atomic<size_t> dropped_{0};

  // Lock order: a Slot's mu before mu_; never call the client with either held.
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<Slot>> slots_;
  std::shared_ptr<Slot> global_slot_;
  std::deque<std::unique_ptr<Buffer>> ready_;  // full buffers waiting for the worker
  int in_flight_ = 0;                          // deliveries by the worker in progress
  uint32_t period_ms_ = 0;
  bool worker_running_ = false;
  bool stop_worker_ = false;
  uint64_t worker_generation_ = 0;
  std::thread* worker_ = nullptr;  // leaked after fork: the thread does not exist in the child
  std::vector<std::shared_ptr<Slot>> fork_locked_;
};

}  // namespace fake_cupti
