#include "analyze/join/correlation.h"

#include <algorithm>
#include <utility>

namespace gpuperf {

void JoinCounts::Count(LaunchJoin join) {
  ++total;
  switch (join) {
    case LaunchJoin::kJoined:
      ++joined;
      break;
    case LaunchJoin::kNoLink:
      ++no_link;
      break;
    case LaunchJoin::kNoStack:
      ++no_stack;
      break;
    case LaunchJoin::kStackLost:
      ++stack_lost;
      break;
  }
}

JoinCounts& JoinCounts::operator+=(const JoinCounts& other) {
  total += other.total;
  joined += other.joined;
  no_link += other.no_link;
  no_stack += other.no_stack;
  stack_lost += other.stack_lost;
  return *this;
}

JoinCounts CorrelationStats::all() const {
  JoinCounts sum = kernels;
  sum += memcpys;
  sum += memsets;
  return sum;
}

const char* LaunchJoinName(LaunchJoin join) {
  switch (join) {
    case LaunchJoin::kJoined:
      return "joined";
    case LaunchJoin::kNoLink:
      return "no launch link";
    case LaunchJoin::kNoStack:
      return "launch without stack";
    case LaunchJoin::kStackLost:
      return "stack missing from trace";
  }
  return "?";
}

Correlator::Correlator(Emit emit) : emit_(std::move(emit)) {}
Correlator::~Correlator() = default;

namespace {

// A table entry is a link only once a link record filled it.
const LaunchLink* IfLinked(const LaunchLink* entry) {
  return entry != nullptr && entry->records != 0 ? entry : nullptr;
}

}  // namespace

const LaunchLink* Correlator::FindLink(uint32_t pid, uint32_t correlation_id) const {
  return IfLinked(links_.Find(pid, correlation_id));
}

const LaunchLink* Correlator::FindLinkCached(uint32_t pid, uint32_t correlation_id) {
  return IfLinked(links_.Find(pid, correlation_id));
}

void Correlator::AddStack(StackId id) {
  if (id >= known_stacks_.size()) known_stacks_.resize(id + 1, false);
  known_stacks_[id] = true;
}

void Correlator::AddLinks(std::span<const LaunchLinkRecord> links) {
  for (const LaunchLinkRecord& link : links) {
    ++stats_.links;
    LaunchLink& entry = links_.At(link.pid, link.correlation_id);
    if (entry.records != 0) {
      ++stats_.duplicate_links;  // the first link is kept
      if (entry.records != UINT32_MAX) ++entry.records;
      continue;
    }
    entry = LaunchLink{link.timestamp_ns, link.stack_id, link.api_name, link.tid, 1};
  }
}

bool Correlator::TryJoin(GpuActivity& activity, uint32_t fallback_correlation_id) {
  const LaunchLink* link = FindLinkCached(activity.pid, activity.correlation_id);
  if (link == nullptr && fallback_correlation_id != 0) {
    link = FindLinkCached(activity.pid, fallback_correlation_id);
    if (link != nullptr) {
      activity.correlation_id = fallback_correlation_id;
      ++stats_.memcpy_runtime_ids;
    }
  }
  if (link == nullptr) return false;
  activity.stack_id = link->stack_id;
  activity.launch_api = link->api;
  activity.launch_tid = link->tid;
  activity.launch_ns = link->launch_ns;
  if (link->stack_id == 0) {
    activity.join = LaunchJoin::kNoStack;
  } else if (link->stack_id >= known_stacks_.size() || !known_stacks_[link->stack_id]) {
    activity.join = LaunchJoin::kStackLost;
  } else {
    activity.join = LaunchJoin::kJoined;
  }
  return true;
}

void Correlator::Deliver(const GpuActivity& activity) {
  switch (activity.kind) {
    case GpuActivityKind::kKernel:
      stats_.kernels.Count(activity.join);
      break;
    case GpuActivityKind::kMemcpy:
      stats_.memcpys.Count(activity.join);
      break;
    case GpuActivityKind::kMemset:
      stats_.memsets.Count(activity.join);
      break;
  }
  emit_(activity);
}

void Correlator::Submit(GpuActivity& activity, uint32_t fallback_correlation_id) {
  if (TryJoin(activity, fallback_correlation_id)) {
    Deliver(activity);
  } else if (links_complete_) {
    activity.join = LaunchJoin::kNoLink;
    Deliver(activity);
  } else {
    waiting_.push_back({activity, fallback_correlation_id});
    if (waiting_.size() >= next_retry_) RetryWaiting();
  }
}

void Correlator::RetryWaiting() {
  size_t kept = 0;
  for (Waiting& w : waiting_) {
    if (TryJoin(w.activity, w.fallback_correlation_id)) {
      Deliver(w.activity);
    } else {
      waiting_[kept++] = w;
    }
  }
  waiting_.resize(kept);
  next_retry_ = std::max(kMinRetry, 2 * kept);
}

namespace {

// The fields kernel, memcpy and memset records share.
template <class GpuRecord>
GpuActivity ActivityOf(GpuActivityKind kind, const GpuRecord& r) {
  GpuActivity a;
  a.kind = kind;
  a.pid = r.pid;
  a.device_id = r.device_id;
  a.stream_id = r.stream_id;
  a.start_ns = r.start_ns;
  a.end_ns = r.end_ns;
  a.correlation_id = r.correlation_id;
  a.graph_id = r.graph_id;
  a.graph_node_id = r.graph_node_id;
  return a;
}

}  // namespace

void Correlator::AddKernels(std::span<const KernelRecord> kernels) {
  for (const KernelRecord& k : kernels) {
    GpuActivity a = ActivityOf(GpuActivityKind::kKernel, k);
    a.name = k.name;
    a.record_index = kernels_seen_++;
    Submit(a, 0);
  }
}

void Correlator::AddMemcpys(std::span<const MemcpyRecord> memcpys) {
  for (const MemcpyRecord& m : memcpys) {
    GpuActivity a = ActivityOf(GpuActivityKind::kMemcpy, m);
    a.memcpy_kind = m.kind;
    a.bytes = m.bytes;
    a.record_index = memcpys_seen_++;
    const uint32_t fallback =
        m.runtime_correlation_id != m.correlation_id ? m.runtime_correlation_id : 0;
    Submit(a, fallback);
  }
}

void Correlator::AddMemsets(std::span<const MemsetRecord> memsets) {
  for (const MemsetRecord& m : memsets) {
    GpuActivity a = ActivityOf(GpuActivityKind::kMemset, m);
    a.bytes = m.bytes;
    a.record_index = memsets_seen_++;
    Submit(a, 0);
  }
}

void Correlator::NoMoreLinks() {
  links_complete_ = true;
}

void Correlator::Finish() {
  links_complete_ = true;
  for (Waiting& w : waiting_) {
    if (!TryJoin(w.activity, w.fallback_correlation_id)) w.activity.join = LaunchJoin::kNoLink;
    Deliver(w.activity);
  }
  waiting_.clear();
  waiting_.shrink_to_fit();
}

Correlation Correlate(const Trace& trace) {
  Correlation result;
  result.activities.reserve(trace.kernels.size() + trace.memcpys.size() + trace.memsets.size());
  Correlator correlator(
      [&result](const GpuActivity& activity) { result.activities.push_back(activity); });
  CorrelateTrace(trace, correlator);
  result.stats = correlator.stats();
  return result;
}

void CorrelateTrace(const Trace& trace, Correlator& correlator) {
  for (size_t id = 1; id < trace.stacks.size(); ++id) {
    if (trace.stacks[id].id == id) correlator.AddStack(static_cast<StackId>(id));
  }
  // Links first, so that every record joins on arrival and keeps trace order.
  correlator.AddLinks(trace.launch_links);
  correlator.NoMoreLinks();
  correlator.AddKernels(trace.kernels);
  correlator.AddMemcpys(trace.memcpys);
  correlator.AddMemsets(trace.memsets);
  correlator.Finish();
}

}  // namespace gpuperf
