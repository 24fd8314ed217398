// One context's range profiler: its CUPTI object, its counter data, and the ranges measured
// since the last decode. Used by range_profiler.cc, under the session's lock.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpuperf/records.h"
#include "inject/cupti/metric_host.h"

struct CUpti_RangeProfiler_Object;

namespace gpuperf::inject {

struct Recorder;

// A range as gpuperf saw it (CPU times, what it covers); CUPTI numbers the same ranges in the
// same order in its counter data.
struct PendingRange {
  MetricRangeKind kind = MetricRangeKind::kUnknown;
  StringId name = 0;
  std::string cupti_name;  // user ranges: the name pushed, checked against CUPTI's
  uint32_t correlation_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

struct RangeSessionOptions {
  bool user_ranges = false;  // NVTX ranges or windows: one pass, no replay
  uint32_t max_ranges = 64;  // ranges kept in the counter data between decodes
};

class RangeSession {
 public:
  RangeSession(CUcontext context, RangeSessionOptions options)
      : context_(context), options_(options) {}
  ~RangeSession();

  // Everything up to SetConfig, on the first launch or range of the context. False (after one
  // log line with the fix, and the hardware_unavailable count) when counters cannot be used.
  bool Setup(Recorder& recorder, const std::string& metric_set);

  bool Start();
  // Opens and closes a user range (a started session of user ranges only).
  bool PushRange(const std::string& name);
  bool PopRange();
  // Stops, decodes, turns every range into records for the writer and makes the counter data
  // ready for the next ranges. Leaves the session stopped.
  void Flush(Recorder& recorder);
  void Disable();

  std::timed_mutex& mutex() { return mutex_; }
  bool usable() const { return usable_; }
  bool started() const { return started_; }
  std::vector<PendingRange>& ranges() { return ranges_; }
  bool full() const { return ranges_.size() >= options_.max_ranges; }
  uint32_t device_id() const { return device_id_; }

  // The thread that started the profiler (range_profiler.cc restarts it on another's launch).
  uint32_t start_tid = 0;
  // User ranges of one thread at a time (the range stack is the context's).
  uint32_t owner_tid = 0;
  uint32_t depth = 0;
  uint64_t window_start_ns = 0;  // time windows: when the open one began (0: none open)
  uint32_t window_index = 0;

 private:
  bool Fail(Recorder* recorder, const char* call, CUptiResult result);
  bool InitCounterData();
  bool SetConfig();
  void Emit(Recorder& recorder, size_t cupti_ranges);

  CUcontext context_;
  RangeSessionOptions options_;
  std::timed_mutex mutex_;
  uint32_t device_id_ = 0;
  uint32_t context_id_ = 0;
  std::shared_ptr<MetricHost> host_;
  StringId set_name_ = 0;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  std::vector<uint8_t> counter_data_;
  std::vector<PendingRange> ranges_;
  bool usable_ = false;
  bool started_ = false;
};

}  // namespace gpuperf::inject
