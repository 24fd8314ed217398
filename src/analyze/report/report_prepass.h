// The report's first pass, for the filters that need the whole trace before the report
// can start: a time range (relative to the trace origin) and an NVTX range name.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "analyze/join/trace_origin.h"
#include "analyze/report/report_builder.h"

namespace gpuperf::report {

struct Prepass {
  uint64_t origin_ns = kNoTime;
  bool nvtx_filter = false;
  // Per process: correlation ids of API calls made inside a matching NVTX range.
  std::unordered_map<uint32_t, std::unordered_set<uint32_t>> nvtx_correlations;

  bool InNvtxRange(uint32_t pid, uint32_t correlation_id) const {
    if (!nvtx_filter) return true;
    auto it = nvtx_correlations.find(pid);
    return it != nvtx_correlations.end() && it->second.count(correlation_id) > 0;
  }
};

// Whether `options` need the first pass at all.
bool NeedsPrepass(const ReportOptions& options);

// Collects what the first pass learns; call Finish() after the last record.
class PrepassSink final : public RecordSink {
 public:
  PrepassSink(const ReportOptions& options, Prepass& out);
  void OnString(StringId id, std::string_view text) override;
  void OnProcess(std::span<const ProcessRecord> records) override;
  void OnKernel(std::span<const KernelRecord> records) override { Starts(records); }
  void OnMemcpy(std::span<const MemcpyRecord> records) override { Starts(records); }
  void OnMemset(std::span<const MemsetRecord> records) override { Starts(records); }
  void OnSync(std::span<const SyncRecord> records) override { Starts(records); }
  void OnApi(std::span<const ApiRecord> records) override;
  void OnNvtx(std::span<const NvtxRecord> records) override;

  // Turns matching ranges and API calls into the per-process correlation sets.
  void Finish();

 private:
  struct Call {
    uint32_t pid, tid;
    uint64_t start;
    uint32_t correlation_id;
  };
  template <class R>
  void Starts(std::span<const R> records) {
    origin_.AddStarts(records);
  }

  Prepass& out_;
  TraceOrigin origin_;
  NameMatcher matcher_;
  std::vector<std::string> strings_;
  std::vector<Call> calls_;
  std::vector<NvtxRecord> ranges_;
};

}  // namespace gpuperf::report
