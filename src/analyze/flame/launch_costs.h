// GPU work per launch site, with what launching it cost the CPU: the model behind the
// pprof export (export/pprof_export.h).
//
// A launch site is everything that places GPU work in a launch-stack profile: process,
// launching thread and stack, the launch API, the graph, the kernel (or copy kind), device
// and stream. Each site adds up the GPU time and the number of GPU activities under it,
// and the CPU time of the API calls that launched them: the duration of the API record
// with the activity's correlation id, counted once per call (a graph launch's call
// launches many kernels), whichever of the call and its GPU work the trace holds first.
#pragma once

#include <compare>
#include <cstdint>
#include <span>
#include <vector>

#include "analyze/join/correlation.h"
#include "analyze/join/correlation_table.h"
#include "base/flat_map.h"
#include "gpuperf/records.h"

namespace gpuperf {

struct LaunchSite {
  uint32_t pid = 0;
  uint32_t tid = 0;   // the launching thread; 0 when the launch is unknown
  StackId stack = 0;  // 0 without a stack
  StringId api = 0;   // outermost API of the launching call
  uint32_t graph_id = 0;
  GpuActivityKind kind = GpuActivityKind::kKernel;
  uint32_t name = 0;  // kernel name id, or the MemcpyKind of a copy
  uint32_t device = 0;
  uint32_t stream = 0;
  LaunchJoin join = LaunchJoin::kNoLink;

  auto operator<=>(const LaunchSite&) const = default;
};

struct LaunchSiteHash {
  size_t operator()(const LaunchSite& s) const {
    uint64_t h = MixHash(0, uint64_t{s.pid} << 32 | s.tid);
    h = MixHash(h, uint64_t{s.stack} << 32 | s.api);
    h = MixHash(h, uint64_t{s.graph_id} << 32 | s.name);
    h = MixHash(h, uint64_t{s.device} << 32 | s.stream);
    return MixHash(h, static_cast<uint64_t>(s.kind) << 8 | static_cast<uint64_t>(s.join));
  }
};

struct LaunchCost {
  LaunchSite site;
  uint64_t gpu_ns = 0;         // summed over activities (concurrent kernels add up)
  uint64_t activities = 0;     // kernels, copies or sets
  uint64_t cpu_launch_ns = 0;  // the launching API calls' durations, each call once
};

class LaunchCostAggregator {
 public:
  // GPU work as the Correlator emits it.
  void Add(const GpuActivity& activity);
  // API records, in any order relative to the GPU work.
  void AddApiCalls(std::span<const ApiRecord> calls);

  // Once everything has been added: whether some calls' GPU work carries an id without an
  // API record. Those are charged the outermost call's record, found by thread and enter
  // time, which asks for the API records once more (RecallApiCalls, all of them, in the
  // order AddApiCalls had them): keeping every API call for what is mostly no such call
  // would cost 24 bytes a call.
  bool NeedsApiCallsAgain();
  void RecallApiCalls(std::span<const ApiRecord> calls);

  // Every site, sorted by LaunchSite, once everything has been added (and recalled).
  std::vector<LaunchCost> Finish();

 private:
  // Per (pid, correlation id): the API call's duration until its GPU work claims it, then
  // the site that claimed it.
  struct Call {
    uint64_t api_ns = 0;
    uint32_t site = 0;  // index + 1 into costs_ of the site that claimed the call; 0 none
    bool api_seen = false;
    bool recalled = false;  // RecallApiCalls has seen its first record
  };

  // A call claimed before its API record was seen, with what finds it by its link.
  struct Pending {
    uint32_t site, pid, tid, correlation_id;
    uint64_t launch_ns;
  };
  // Where an unresolved claim looks for its call: thread and enter time.
  struct Enter {
    uint32_t pid, tid;
    uint64_t start_ns;
    bool operator==(const Enter&) const = default;
  };
  struct EnterHash {
    size_t operator()(const Enter& e) const {
      return MixHash(MixHash(0, uint64_t{e.pid} << 32 | e.tid), e.start_ns);
    }
  };
  // The shortest of the calls entered there (the first record of each call).
  struct Shortest {
    bool found = false;
    uint64_t ns = 0;
  };

  void Charge(uint32_t site, uint64_t ns) { costs_[site - 1].cpu_launch_ns += ns; }

  FlatMap<LaunchSite, uint32_t, LaunchSiteHash> index_;  // site -> index + 1 into costs_
  std::vector<LaunchCost> costs_;
  CorrelationTable<Call> calls_;
  // Claims waiting for their API record; those the record has reached since are dropped
  // whenever the list has doubled (memory bounded by twice the ones really waiting).
  std::vector<Pending> pending_;
  size_t next_prune_ = kMinPrune;
  static constexpr size_t kMinPrune = 1 << 16;
  void PrunePending();
  // For the claims whose record never came (NeedsApiCallsAgain).
  FlatMap<Enter, Shortest, EnterHash> shortest_{2};
  LaunchSite last_site_;
  uint32_t last_index_ = 0;
};

}  // namespace gpuperf
