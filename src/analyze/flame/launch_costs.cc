#include "analyze/flame/launch_costs.h"

#include <algorithm>

namespace gpuperf {

void LaunchCostAggregator::Add(const GpuActivity& a) {
  LaunchSite site;
  site.pid = a.pid;
  site.tid = a.launch_tid;
  site.stack = a.stack_id;
  site.api = a.launch_api;
  site.graph_id = a.graph_id;
  site.kind = a.kind;
  site.name = a.what();
  site.device = a.device_id;
  site.stream = a.stream_id;
  site.join = a.join;
  // Consecutive activities mostly share a site (loops launch the same kernels).
  if (last_index_ == 0 || !(site == last_site_)) {
    auto [it, inserted] = index_.emplace(site, static_cast<uint32_t>(costs_.size() + 1));
    if (inserted) costs_.push_back(LaunchCost{site, 0, 0, 0});
    last_site_ = site;
    last_index_ = it->second;
  }
  LaunchCost& cost = costs_[last_index_ - 1];
  cost.gpu_ns += a.duration_ns();
  ++cost.activities;

  if (a.correlation_id == 0) return;
  Call& call = calls_.At(a.pid, a.correlation_id);
  if (call.site != 0) return;  // another activity of the same call has it
  call.site = last_index_;
  if (call.api_seen) {
    Charge(call.site, call.api_ns);
  } else if (a.join != LaunchJoin::kNoLink) {
    pending_.push_back({last_index_, a.pid, a.launch_tid, a.correlation_id, a.launch_ns});
  }
}

void LaunchCostAggregator::AddApiCalls(std::span<const ApiRecord> calls) {
  for (const ApiRecord& api : calls) {
    if (api.correlation_id == 0) continue;
    Call& call = calls_.At(api.pid, api.correlation_id);
    if (call.api_seen) continue;  // a repeated record: the first one counts
    call.api_seen = true;
    call.api_ns = api.end_ns > api.start_ns ? api.end_ns - api.start_ns : 0;
    if (call.site != 0) Charge(call.site, call.api_ns);
    api_calls_.push_back({api.pid, api.tid, api.start_ns, call.api_ns});
  }
}

std::vector<LaunchCost> LaunchCostAggregator::Finish() {
  // Calls whose GPU work carries an id without an API record: the outermost call's
  // record, found by thread and enter time.
  std::sort(api_calls_.begin(), api_calls_.end());
  for (const Pending& p : pending_) {
    const Call* call = calls_.Find(p.pid, p.correlation_id);
    if (call != nullptr && call->api_seen) continue;  // charged when the record came
    auto it = std::lower_bound(api_calls_.begin(), api_calls_.end(),
                               ApiCall{p.pid, p.tid, p.launch_ns, 0});
    if (it != api_calls_.end() && it->pid == p.pid && it->tid == p.tid &&
        it->start_ns == p.launch_ns) {
      Charge(p.site, it->duration_ns);
    }
  }
  pending_.clear();
  api_calls_.clear();
  std::vector<LaunchCost> sorted = costs_;
  std::sort(sorted.begin(), sorted.end(),
            [](const LaunchCost& a, const LaunchCost& b) { return a.site < b.site; });
  return sorted;
}

}  // namespace gpuperf
