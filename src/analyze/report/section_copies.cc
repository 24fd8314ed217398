// Memory copies by direction and memsets by memory kind; the summary's copy and set
// totals.
#include <array>

#include "analyze/report/report_builder.h"

namespace gpuperf::report {
namespace {

struct CopyAgg {
  DurationStats time;
  uint64_t bytes = 0;
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
};

class CopiesSection final : public ReportSection {
 public:
  void OnMemcpys(std::span<const MemcpyRecord> records) override {
    for (const MemcpyRecord& m : records) {
      const uint64_t ns = Duration(m.start_ns, m.end_ns);
      CopyAgg& agg = memcpy_[static_cast<size_t>(m.kind) % memcpy_.size()];
      if (agg.time.count == 0 || m.bytes < agg.min_bytes) agg.min_bytes = m.bytes;
      agg.max_bytes = std::max(agg.max_bytes, m.bytes);
      agg.bytes += m.bytes;
      AddDuration(agg.time, ns);
    }
  }

  void OnMemsets(std::span<const MemsetRecord> records) override {
    for (const MemsetRecord& m : records) {
      CopyAgg& agg = memset_[static_cast<size_t>(m.memory_kind) % memset_.size()];
      agg.bytes += m.bytes;
      AddDuration(agg.time, Duration(m.start_ns, m.end_ns));
    }
  }

  void Finish(ReportModel& model) override {
    ReportSummary& s = model.summary;
    for (size_t kind = 0; kind < memcpy_.size(); ++kind) {
      const CopyAgg& agg = memcpy_[kind];
      s.memcpys += agg.time.count;
      s.memcpy_ns += agg.time.total_ns;
      s.memcpy_bytes += agg.bytes;
      if (agg.time.count == 0) continue;
      model.memcpy.push_back(
          {static_cast<MemcpyKind>(kind), agg.time, agg.bytes, agg.min_bytes, agg.max_bytes});
    }
    for (size_t kind = 0; kind < memset_.size(); ++kind) {
      const CopyAgg& agg = memset_[kind];
      s.memsets += agg.time.count;
      s.memset_ns += agg.time.total_ns;
      if (agg.time.count == 0) continue;
      model.memset.push_back({static_cast<MemoryKind>(kind), agg.time, agg.bytes});
    }
  }

 private:
  std::array<CopyAgg, 16> memcpy_{};  // by MemcpyKind
  std::array<CopyAgg, 8> memset_{};   // by MemoryKind
};

}  // namespace

std::unique_ptr<ReportSection> MakeCopiesSection(ReportContext&) {
  return std::make_unique<CopiesSection>();
}

}  // namespace gpuperf::report
