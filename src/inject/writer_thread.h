// The writer thread: the only code that touches the trace file. CUPTI's threads hand
// it translated batches; app threads never wait for it. Every flush period it drains
// launch links, new stacks and names, writes them and flushes the file, so a process
// that dies without exit handlers loses at most one period.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpuperf/status.h"
#include "gpuperf/trace_writer.h"
#include "inject/config.h"
#include "inject/flight/flight_recorder.h"
#include "inject/modules.h"
#include "inject/name_table.h"
#include "inject/record_batch.h"

namespace gpuperf::inject {

struct WriterHooks {
  // Called on the writer thread each period before draining (asks CUPTI to hand over
  // completed buffers) and for signal flushes (forced).
  std::function<void(bool forced)> flush_cupti;
  // Called each period: capture-range bookkeeping.
  std::function<void(uint64_t now_ns)> on_period;
  // on_period is also called at these times (CLOCK_MONOTONIC ns, ascending): the capture
  // range's edges, which a period of 500 ms would otherwise round up to its next tick.
  std::vector<uint64_t> wake_times;
  // Called with each cycle's records before they are written (the live page folds them).
  std::function<void(const std::deque<std::unique_ptr<RecordBatch>>& batches,
                     const std::vector<ApiRecord>& api_calls)>
      on_records;
  // Called after each period's stats snapshot (`closing`: the trace is about to close).
  std::function<void(uint64_t now_ns, bool closing)> on_stats;
};

class WriterThread {
 public:
  Status Start(const std::string& path, const Config& config, uint32_t pid, NameTable& names,
               ProcessRecord process, WriterHooks hooks);

  // From any non-app thread. Drops (and counts) the batch when over the memory budget.
  void Enqueue(std::unique_ptr<RecordBatch> batch);

  // Async-signal-safe: asks the writer to flush CUPTI and the file now; `final` also
  // closes the trace (the process is about to die). Returns at once.
  void RequestSignalFlush(bool final);
  // Asks for CUPTI's completed buffers now rather than at the next period (cheap;
  // callable from CUPTI's buffer-request callback).
  void RequestEarlyFlush() {
    if (!early_flush_.exchange(true)) Wake();
  }

  // Asks for a write cycle now (it drains app threads and frees the buffers of those that
  // ended). Non-blocking: one eventfd write, callable from an exiting thread.
  void RequestWrite() { Wake(); }

  // Flight recorder (flight/flight_recorder.h), nothing without --flight.
  // Async-signal-safe: asks for a dump of the window now.
  void RequestFlightDump(FlightTrigger why) {
    if (flight_ == nullptr) return;
    flight_->Request(why);
    Wake();
  }
  // Any thread, never blocking: a CUDA call returned `code` (non-zero).
  void NoteCudaError(StringId api_name, int32_t code) {
    if (flight_ != nullptr && flight_->NoteCudaError(api_name, code)) Wake();
  }
  bool flight() const { return flight_ != nullptr; }

  bool SignalFlushDone() const { return signal_flush_done_.load(std::memory_order_acquire); }

  // Stops the writer's own CUPTI flushes and waits (at most `timeout_ms`) for one in
  // progress, so that the exit path's forced flush is the last delivery.
  void StopCuptiFlushes(uint32_t timeout_ms);
  // Periodic flushes again (the benchmark toggle's re-attach, after StopCuptiFlushes).
  void ResumeCuptiFlushes() { cupti_flushes_stopped_.store(false); }
  // A periodic flush that StopCuptiFlushes gave up waiting for is still inside CUPTI.
  bool InCuptiFlush() const { return in_cupti_flush_.load(); }

  // Final drain and close, waiting at most `timeout_ms`. Returns false on timeout.
  bool Finish(uint32_t timeout_ms);

  bool running() const { return running_.load(); }

 private:
  void Run();
  void WriteCycle();
  void WriteStats();
  void FinishTrace();  // last cycle, the process's end, close
  void DumpFlight(uint32_t why);
  // Runs a flush of the trace file, counting its time (compressing and writing the
  // chunks still open) as compress_ns. The final close is not counted: the stats are
  // written before it.
  template <class Write>
  Status Timed(Write write);
  void FlushCupti(bool forced);
  void Wake();

  std::unique_ptr<TraceWriter> writer_;  // the trace file, or with --flight the ring
  std::unique_ptr<FlightRecorder> flight_;
  FlightRing* ring_ = nullptr;  // writer_, with --flight
  Config config_;
  uint32_t pid_ = 0;
  NameTable* names_ = nullptr;
  ProcessRecord process_;
  WriterHooks hooks_;
  ModuleTracker modules_;

  std::mutex mutex_;
  std::deque<std::unique_ptr<RecordBatch>> queue_;
  size_t queued_bytes_ = 0;
  std::condition_variable finished_cv_;
  bool finished_ = false;

  int wake_fd_ = -1;  // eventfd: writable from signal handlers
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
  std::atomic<int> signal_flush_{0};  // 0 none, 1 flush, 2 final
  std::atomic<bool> signal_flush_done_{false};
  std::atomic<bool> early_flush_{false};
  std::atomic<bool> cupti_flushes_stopped_{false};
  std::atomic<bool> in_cupti_flush_{false};
  bool closing_ = false;  // writer thread: FinishTrace's last stats
  std::thread thread_;
};

}  // namespace gpuperf::inject
