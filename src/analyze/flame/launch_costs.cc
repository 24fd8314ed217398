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
    bool inserted = false;
    uint32_t& index = *index_.Insert(site, &inserted);
    if (inserted) {
      costs_.push_back(LaunchCost{site, 0, 0, 0});
      index = static_cast<uint32_t>(costs_.size());
    }
    last_site_ = site;
    last_index_ = index;
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
    if (pending_.size() >= next_prune_) PrunePending();
  }
}

void LaunchCostAggregator::PrunePending() {
  std::erase_if(pending_, [this](const Pending& p) {
    const Call* call = calls_.Find(p.pid, p.correlation_id);
    return call != nullptr && call->api_seen;  // charged when the record came
  });
  next_prune_ = std::max(kMinPrune, 2 * pending_.size());
}

void LaunchCostAggregator::AddApiCalls(std::span<const ApiRecord> calls) {
  for (const ApiRecord& api : calls) {
    if (api.correlation_id == 0) continue;
    Call& call = calls_.At(api.pid, api.correlation_id);
    if (call.api_seen) continue;  // a repeated record: the first one counts
    call.api_seen = true;
    call.api_ns = api.end_ns > api.start_ns ? api.end_ns - api.start_ns : 0;
    if (call.site != 0) Charge(call.site, call.api_ns);
  }
}

bool LaunchCostAggregator::NeedsApiCallsAgain() {
  PrunePending();
  if (pending_.empty()) return false;
  shortest_ = FlatMap<Enter, Shortest, EnterHash>(2 * pending_.size());
  for (const Pending& p : pending_) shortest_[{p.pid, p.tid, p.launch_ns}];
  return true;
}

void LaunchCostAggregator::RecallApiCalls(std::span<const ApiRecord> calls) {
  if (shortest_.empty()) return;
  for (const ApiRecord& api : calls) {
    if (api.correlation_id == 0) continue;
    Call* call = calls_.Find(api.pid, api.correlation_id);
    // Of repeated records the first one counts, with the duration AddApiCalls kept.
    if (call == nullptr || !call->api_seen || call->recalled) continue;
    call->recalled = true;
    Shortest* s = shortest_.Find({api.pid, api.tid, api.start_ns});
    if (s != nullptr && (!s->found || call->api_ns < s->ns)) *s = {true, call->api_ns};
  }
}

std::vector<LaunchCost> LaunchCostAggregator::Finish() {
  // The claims still unresolved at the end: charged the shortest of the calls entered on
  // their thread at their link's enter time (NeedsApiCallsAgain, RecallApiCalls).
  PrunePending();
  for (const Pending& p : pending_) {
    const Shortest* s = shortest_.Find({p.pid, p.tid, p.launch_ns});
    if (s != nullptr && s->found) Charge(p.site, s->ns);
  }
  pending_.clear();
  shortest_ = FlatMap<Enter, Shortest, EnterHash>(2);
  std::vector<LaunchCost> sorted = costs_;
  std::sort(sorted.begin(), sorted.end(),
            [](const LaunchCost& a, const LaunchCost& b) { return a.site < b.site; });
  return sorted;
}

}  // namespace gpuperf
