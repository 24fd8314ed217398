// Device memory: allocations, frees and the peak per (process, device); the largest
// allocations still live at exit, with the allocating call and its stack.
#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "analyze/report/report_builder.h"

namespace gpuperf::report {
namespace {

class MemorySection final : public ReportSection {
 public:
  explicit MemorySection(ReportContext& context) : context_(context) {}

  void OnMemory(std::span<const MemoryRecord> records) override {
    for (const MemoryRecord& m : records) memory_[m.pid].push_back(m);
  }

  void Finish(ReportModel& model) override {
    for (auto& [pid, records] : memory_) Replay(pid, records, model);
    std::sort(model.memory.begin(), model.memory.end(),
              [](const MemoryDeviceRow& a, const MemoryDeviceRow& b) {
                return std::tie(a.pid, a.device) < std::tie(b.pid, b.device);
              });
    std::sort(model.leaks.begin(), model.leaks.end(), [](const LeakRow& a, const LeakRow& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes
                                : std::tie(a.pid, a.address) < std::tie(b.pid, b.address);
    });
    const uint32_t max_leaks = context_.options().max_leaks;
    if (model.leaks.size() > max_leaks) model.leaks.resize(max_leaks);
  }

 private:
  // Replays one process's allocations and frees in time order.
  void Replay(uint32_t pid, std::vector<MemoryRecord>& records, ReportModel& model) {
    struct Live {
      uint64_t bytes;
      size_t record;
    };
    std::stable_sort(records.begin(), records.end(),
                     [](const MemoryRecord& a, const MemoryRecord& b) {
                       return a.timestamp_ns < b.timestamp_ns;
                     });
    std::vector<MemoryDeviceRow> rows;
    auto row_of = [&](uint32_t device) -> MemoryDeviceRow& {
      for (MemoryDeviceRow& r : rows) {
        if (r.device == device) return r;
      }
      rows.push_back({});
      rows.back().pid = pid;
      rows.back().device = device;
      return rows.back();
    };
    std::unordered_map<uint64_t, Live> live;  // by address
    for (size_t i = 0; i < records.size(); ++i) {
      const MemoryRecord& m = records[i];
      MemoryDeviceRow& row = row_of(m.device_id);
      if (m.op == MemoryOp::kAllocation) {
        ++row.allocations;
        row.bytes_allocated += m.bytes;
        row.live_bytes_at_exit += m.bytes;
        ++row.live_allocations_at_exit;
        live[m.address] = {m.bytes, i};
        if (row.live_bytes_at_exit > row.peak_bytes) {
          row.peak_bytes = row.live_bytes_at_exit;
          row.peak_at_ns = m.timestamp_ns;
        }
      } else if (m.op == MemoryOp::kRelease) {
        ++row.frees;
        auto it = live.find(m.address);
        if (it == live.end()) {
          ++row.unmatched_frees;
          continue;
        }
        // The bytes come back to the device they were allocated on.
        MemoryDeviceRow& owner = row_of(records[it->second.record].device_id);
        owner.bytes_freed += it->second.bytes;
        owner.live_bytes_at_exit -= it->second.bytes;
        --owner.live_allocations_at_exit;
        live.erase(it);
      }
    }
    for (MemoryDeviceRow& r : rows) {
      r.peak_at_ns = context_.SinceOrigin(r.peak_at_ns);
      model.memory.push_back(r);
    }
    for (const auto& [address, l] : live) {
      const MemoryRecord& m = records[l.record];
      LeakRow leak;
      leak.pid = pid;
      leak.device = m.device_id;
      leak.address = address;
      leak.bytes = l.bytes;
      leak.memory_kind = m.memory_kind;
      leak.at_ns = context_.SinceOrigin(m.timestamp_ns);
      const auto* link = context_.FindLink(pid, m.correlation_id);
      if (link != nullptr && link->stack_id != 0) {
        leak.api = context_.Str(link->api);
        leak.stack = context_.StackFrames(link->stack_id, link->tid);
      }
      model.leaks.push_back(std::move(leak));
    }
  }

  ReportContext& context_;
  PerProcess<std::vector<MemoryRecord>> memory_;
};

}  // namespace

std::unique_ptr<ReportSection> MakeMemorySection(ReportContext& context) {
  return std::make_unique<MemorySection>(context);
}

}  // namespace gpuperf::report
