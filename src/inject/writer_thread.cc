#include "inject/writer_thread.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <ctime>
#include <vector>

#include "inject/log.h"
#include "inject/preload_stats.h"
#include "inject/recorder_memory.h"
#include "inject/stack/stack_capture.h"
#include "inject/stats.h"
#include "inject/thread_buffers.h"

namespace gpuperf::inject {
namespace {

uint64_t NowNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

// One line for the whole run: a full disk fails every chunk after the first.
void LogWriteError(const Status& status) {
  if (status.ok()) return;
  LogOnce("cannot write the trace: %s; the records left out are counted as lost",
          status.message().c_str());
}

// Wake-up eventfds of writers that finished (an attach window's), for the next one to take:
// never closed, since a thread of the program may still be in Wake() on a finished writer and
// must not write into a file opened later under the same number. So a process attached to many
// times holds as many as ever ran at once (one), not one per window.
std::mutex g_spare_wake_mutex;
std::vector<int> g_spare_wake_fds;

int TakeWakeFd() {
  {
    std::lock_guard<std::mutex> lock(g_spare_wake_mutex);
    if (!g_spare_wake_fds.empty()) {
      const int fd = g_spare_wake_fds.back();
      g_spare_wake_fds.pop_back();
      return fd;
    }
  }
  return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

void GiveBackWakeFd(int fd) {
  std::lock_guard<std::mutex> lock(g_spare_wake_mutex);
  g_spare_wake_fds.push_back(fd);
}

}  // namespace

Status WriterThread::Start(const std::string& path, const Config& config, uint32_t pid,
                           NameTable& names, ProcessRecord process, WriterHooks hooks) {
  if (config.flight_window_ms != 0) {
    // Flight recorder: records go to a ring in memory; dumps are the only files.
    flight_ = std::make_unique<FlightRecorder>(config, path, pid);
    std::unique_ptr<FlightRing> ring = flight_->MakeRing();
    ring_ = ring.get();
    writer_ = std::move(ring);
  } else {
    TraceWriterOptions options;
    auto writer = TraceWriter::Create(path, options);
    if (!writer.ok()) return writer.status();
    writer_ = std::move(writer).value();
  }
  config_ = config;
  pid_ = pid;
  names_ = &names;
  process_ = process;
  hooks_ = std::move(hooks);
  wake_fd_ = TakeWakeFd();
  if (wake_fd_ < 0) return Error(StatusCode::kIoError, "eventfd failed");
  running_ = true;
  thread_ = std::thread([this] { Run(); });
  return Status::Ok();
}

void WriterThread::Wake() {
  uint64_t one = 1;
  ssize_t ignored = ::write(wake_fd_, &one, sizeof(one));
  (void)ignored;
}

void WriterThread::Enqueue(std::unique_ptr<RecordBatch> batch) {
  const size_t bytes = batch->ApproxBytes();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!running_) {
      CountStat(StatId::records_after_close, batch->RecordCount());
      return;
    }
    // Queued batches share the recorder's one memory budget with CUPTI's buffers.
    if (!ReserveRecorderMemory(bytes)) {
      CountStat(StatId::writer_queue_full, batch->RecordCount());
      return;
    }
    queued_bytes_ += bytes;
    queue_.push_back(std::move(batch));
  }
  // Wake early only when a lot is waiting: batching keeps chunks large.
  if (bytes > (1u << 20)) Wake();
}

void WriterThread::RequestSignalFlush(bool final) {
  signal_flush_done_.store(false, std::memory_order_release);
  if (final) {
    signal_flush_.store(2, std::memory_order_release);
  } else {
    int none = 0;  // a final flush asked for on another thread stays final
    signal_flush_.compare_exchange_strong(none, 1, std::memory_order_acq_rel);
  }
  Wake();
}

void WriterThread::Run() {
  // Our own thread: keep the app's signals away from it (they belong to the app).
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);

  const uint64_t period_ns = static_cast<uint64_t>(config_.flush_period_ms) * 1000000ull;
  uint64_t next_period = NowNs(CLOCK_MONOTONIC) + period_ns;
  {
    std::vector<ModuleRecord> modules;
    modules_.Refresh(pid_, *names_, modules);
    WriteCycle();
    for (const ModuleRecord& m : modules) writer_->Add(m);
    writer_->Add(process_);
    writer_->Add(ClockRecord{pid_, NowNs(CLOCK_MONOTONIC), NowNs(CLOCK_REALTIME)});
    LogWriteError(Timed([this] { return writer_->Flush(); }));
  }
  // Early CUPTI flushes (asked for under memory pressure) come at most this often: under a
  // steady high load the pressure never ends, and back-to-back flushes would only contend
  // with the launching threads inside CUPTI.
  constexpr uint64_t kEarlyFlushGapNs = 20 * 1000000ull;
  uint64_t next_early_ok = 0;
  size_t next_wake = 0;  // hooks_.wake_times[next_wake] is the next one due
  while (!stop_.load()) {
    const uint64_t now = NowNs(CLOCK_MONOTONIC);
    uint64_t wake_at = next_period;
    if (next_wake < hooks_.wake_times.size() && hooks_.wake_times[next_wake] < wake_at) {
      wake_at = hooks_.wake_times[next_wake];
    }
    if (early_flush_.load() && next_early_ok < wake_at) wake_at = next_early_ok;
    const int timeout_ms = wake_at > now ? static_cast<int>((wake_at - now) / 1000000ull) + 1 : 0;
    pollfd fds[2] = {{wake_fd_, POLLIN, 0}, {flight_ ? flight_->watch_fd() : -1, POLLIN, 0}};
    ::poll(fds, 2, timeout_ms);
    uint64_t drained;
    ssize_t ignored = ::read(wake_fd_, &drained, sizeof(drained));
    (void)ignored;
    if (stop_.load()) break;

    const int signal_flush = signal_flush_.exchange(0);
    if (signal_flush != 0) {
      if (hooks_.flush_cupti) FlushCupti(true);
      if (signal_flush == 2) {
        FinishTrace();  // the process dies next: this is its final flush
      } else {
        WriteCycle();
        WriteStats();
        LogWriteError(Timed([this] { return writer_->Flush(); }));
      }
      signal_flush_done_.store(true, std::memory_order_release);
      if (signal_flush == 2) break;
      continue;
    }
    const uint64_t after = NowNs(CLOCK_MONOTONIC);
    const bool period_due = after >= next_period;
    if (flight_ != nullptr) {
      // A dump asked for: what CUPTI has completed and the app threads hold goes in first.
      if (const uint32_t why = flight_->TakeTriggers(period_due)) {
        if (hooks_.flush_cupti) FlushCupti(false);
        WriteCycle();
        DumpFlight(why);
      }
    }
    const bool early = after >= next_early_ok && early_flush_.exchange(false);
    bool wake_due = false;
    while (next_wake < hooks_.wake_times.size() && after >= hooks_.wake_times[next_wake]) {
      ++next_wake;
      wake_due = true;
    }
    if (period_due) next_period = after + period_ns;
    if ((period_due || wake_due) && hooks_.on_period) hooks_.on_period(after);
    if ((period_due || early) && hooks_.flush_cupti) {
      FlushCupti(false);
      next_early_ok = NowNs(CLOCK_MONOTONIC) + kEarlyFlushGapNs;
    }
    WriteCycle();
    if (period_due) {
      WriteStats();
      LogWriteError(Timed([this] { return writer_->Flush(); }));
    } else if (ring_ != nullptr) {
      Timed([this] { return ring_->Flush(); });  // seals the ring's segment when it is due
    }
  }
  if (running_) FinishTrace();
  std::lock_guard<std::mutex> lock(mutex_);
  finished_ = true;
  finished_cv_.notify_all();
}

void WriterThread::FinishTrace() {
  WriteCycle();
  // Every record written (or counted as not written) before the last counters are taken.
  if (flight_ == nullptr) LogWriteError(Timed([this] { return writer_->Flush(); }));
  // The process record again, now with its end: readers take it as "the final flush ran".
  process_.end_ns = NowNs(CLOCK_MONOTONIC);
  writer_->Add(process_);
  writer_->Add(ClockRecord{pid_, NowNs(CLOCK_MONOTONIC), NowNs(CLOCK_REALTIME)});
  closing_ = true;
  WriteStats();
  if (flight_ != nullptr) {
    flight_->Dump(*ring_, kFlightExit | flight_->TakeTriggers(false), process_.end_ns);
    flight_->Finish();
  }
  Status status = writer_->Close();
  if (!status.ok()) LogOnce("cannot finish the trace: %s", status.message().c_str());
  running_ = false;
}

void WriterThread::DumpFlight(uint32_t why) {
  const uint64_t now = NowNs(CLOCK_MONOTONIC);
  writer_->Add(ClockRecord{pid_, now, NowNs(CLOCK_REALTIME)});
  WriteStats();
  const uint64_t start = NowNs(CLOCK_MONOTONIC);
  flight_->Dump(*ring_, why, now);
  CountStat(StatId::compress_ns, NowNs(CLOCK_MONOTONIC) - start);
}

void WriterThread::WriteCycle() {
  std::deque<std::unique_ptr<RecordBatch>> batches;
  size_t batch_bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    batches.swap(queue_);
    batch_bytes = queued_bytes_;
    queued_bytes_ = 0;
  }
  // Links, stacks, then names: each is drained after everything that could refer to
  // it, and written before it, so no record points at an undefined id.
  std::vector<LaunchLinkRecord> links;
  std::vector<ApiRecord> api_calls;
  std::vector<ThreadRecord> threads;
  DrainThreadBuffers(links, api_calls, &threads, pid_, *names_);
  std::vector<StackRecord> stacks;
  DrainNewStacks(stacks, pid_);
  std::vector<PythonCodeRecord> python_codes;  // after the stacks that name them
  DrainNewPythonCodeRecords(python_codes, pid_, *names_);
  std::vector<ModuleRecord> modules;
  if (modules_.NeedsRefresh(stacks)) modules_.Refresh(pid_, *names_, modules);
  std::vector<std::pair<StringId, std::string>> strings;
  names_->DrainNew(strings);
  if (hooks_.on_records) hooks_.on_records(batches, api_calls);

  // Adding records encodes them and compresses and writes every chunk that fills.
  const uint64_t write_start = NowNs(CLOCK_MONOTONIC);
  for (const auto& [id, text] : strings) writer_->AddString(id, text);
  for (const PythonCodeRecord& code : python_codes) writer_->AddPythonCode(code);
  for (const StackRecord& stack : stacks) writer_->AddStack(stack);
  for (const ModuleRecord& module : modules) writer_->Add(module);
  for (const ThreadRecord& thread : threads) writer_->Add(thread);
  for (const auto& batch : batches) {
#define GPUPERF_WRITE_BATCH(Type, name, plural, number) \
  for (const auto& record : batch->plural) writer_->Add(record);
    GPUPERF_FIXED_RECORD_TYPES(GPUPERF_WRITE_BATCH)
#undef GPUPERF_WRITE_BATCH
    for (const CubinRecord& cubin : batch->cubins) writer_->AddCubin(cubin);
    for (const PcSampleRecord& sample : batch->pc_samples) writer_->AddPcSample(sample);
  }
  for (const ApiRecord& call : api_calls) writer_->Add(call);
  for (const LaunchLinkRecord& link : links) writer_->Add(link);
  batches.clear();
  ReleaseRecorderMemory(batch_bytes);
  CountStat(StatId::compress_ns, NowNs(CLOCK_MONOTONIC) - write_start);
}

template <class Write>
Status WriterThread::Timed(Write write) {
  const uint64_t start = NowNs(CLOCK_MONOTONIC);
  Status status = write();
  CountStat(StatId::compress_ns, NowNs(CLOCK_MONOTONIC) - start);
  return status;
}

void WriterThread::WriteStats() {
  const TraceWriterStats& ws = writer_->stats();
  SetStat(StatId::bytes_written, ws.bytes_written);
  SetStat(StatId::chunks_written, ws.chunks_written);
  SetStat(StatId::write_errors, ws.write_errors);
  uint64_t totals[kThreadStatCount];
  ThreadStatTotals(totals);
  for (size_t i = 0; i < kThreadStatCount; ++i) SetStat(kThreadStats[i], totals[i]);
  UpdatePythonStats();
  UpdatePreloadStats();
  // The live page's update is counted in the snapshot after it.
  if (hooks_.on_stats) hooks_.on_stats(NowNs(CLOCK_MONOTONIC), closing_);
  // Cumulative values: readers take the last record of each stat.
  for (uint32_t id = 1; id < kStatSlots; ++id) {
    uint64_t value = g_stats[id].load(std::memory_order_relaxed);
    if (value != 0) writer_->Add(StatRecord{pid_, id, value});
  }
  // What a full disk kept out, by kind: the writer's own counts, past the shared counters.
  for (uint32_t type = 0; type < kNotWrittenKinds; ++type) {
    const uint64_t value = ws.records_not_written[type];
    if (value != 0) writer_->Add(StatRecord{pid_, kNotWrittenStats + type, value});
  }
}

void WriterThread::FlushCupti(bool forced) {
  in_cupti_flush_.store(true);
  if (!cupti_flushes_stopped_.load()) hooks_.flush_cupti(forced);
  in_cupti_flush_.store(false);
}

void WriterThread::StopCuptiFlushes(uint32_t timeout_ms) {
  cupti_flushes_stopped_.store(true);
  for (uint32_t waited = 0; in_cupti_flush_.load() && waited < timeout_ms; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

bool WriterThread::Finish(uint32_t timeout_ms) {
  if (!thread_.joinable()) return true;
  stop_.store(true);
  Wake();
  std::unique_lock<std::mutex> lock(mutex_);
  bool done = finished_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                    [this] { return finished_; });
  lock.unlock();
  if (done) {
    thread_.join();
    GiveBackWakeFd(wake_fd_);  // a late Wake() only wakes the next writer once, for nothing
  } else {
    thread_.detach();  // never hang the host process on exit
  }
  return done;
}

}  // namespace gpuperf::inject
