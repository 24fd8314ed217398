// Synchronization: where CPU threads waited for the GPU, per (thread, kind, stream), with
// the stack of the longest wait.
#include <algorithm>
#include <unordered_map>

#include "analyze/report/report_builder.h"

namespace gpuperf::report {
namespace {

class SyncSection final : public ReportSection {
 public:
  explicit SyncSection(ReportContext& context) : context_(context) {}

  void OnSyncs(std::span<const SyncRecord> records) override {
    for (const SyncRecord& s : records) syncs_[s.pid].push_back(s);
  }

  void Finish(ReportModel& model) override {
    struct Group {
      SyncRow row;
      uint64_t longest = 0;
      uint32_t longest_correlation = 0;
    };
    for (const auto& [pid, syncs] : syncs_) {
      std::vector<Group> groups;
      std::unordered_map<uint64_t, size_t> index;
      for (const SyncRecord& s : syncs) {
        const bool on_stream = s.stream_id != UINT32_MAX && s.kind != SyncKind::kContextSynchronize;
        const uint64_t key = (uint64_t{s.tid} << 32) ^
                             (uint64_t{static_cast<uint8_t>(s.kind)} << 28) ^
                             (on_stream ? s.stream_id : 0x0FFFFFFF);
        auto [it, inserted] = index.try_emplace(key, groups.size());
        if (inserted) {
          groups.push_back({});
          SyncRow& row = groups.back().row;
          row.pid = pid;
          row.tid = s.tid;
          row.kind = s.kind;
          if (on_stream) row.stream = s.stream_id;
        }
        Group& g = groups[it->second];
        const uint64_t ns = Duration(s.start_ns, s.end_ns);
        AddDuration(g.row.time, ns);
        if (g.row.time.count == 1 || ns > g.longest) {
          g.longest = ns;
          g.longest_correlation = s.correlation_id;
        }
      }
      for (Group& g : groups) {
        const auto* link = context_.FindLink(pid, g.longest_correlation);
        if (link != nullptr && link->stack_id != 0) {
          g.row.stack = context_.StackFrames(link->stack_id, link->tid);
        }
        model.sync.push_back(std::move(g.row));
      }
    }
    std::stable_sort(model.sync.begin(), model.sync.end(), [](const SyncRow& a, const SyncRow& b) {
      return a.time.total_ns > b.time.total_ns;
    });
  }

 private:
  ReportContext& context_;
  PerProcess<std::vector<SyncRecord>> syncs_;
};

}  // namespace

std::unique_ptr<ReportSection> MakeSyncSection(ReportContext& context) {
  return std::make_unique<SyncSection>(context);
}

}  // namespace gpuperf::report
