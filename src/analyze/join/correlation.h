// The exact CPU→GPU join: every kernel, copy and set finds the CPU call stack that
// launched it through its (process, correlation id), never through timestamps.
//
// The injection library writes one LaunchLinkRecord per correlation id of every launch,
// copy and set API call; nested calls (cudaLaunchKernel → cuLaunchKernel) get a link for
// each id, all naming the outermost call's stack and API. Kernels of a graph launch carry
// the correlation id of the cudaGraphLaunch/cuGraphLaunch call, so they all join to that
// call's stack. A GPU record without a link is never dropped: it comes out with
// join == kNoLink and is counted.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "analyze/join/correlation_table.h"
#include "gpuperf/records.h"
#include "gpuperf/trace.h"

namespace gpuperf {

enum class GpuActivityKind : uint8_t { kKernel = 0, kMemcpy = 1, kMemset = 2 };

// How a GPU activity found (or did not find) its launch.
enum class LaunchJoin : uint8_t {
  kJoined = 0,     // link and stack found
  kNoLink = 1,     // no launch link for its correlation id (dropped, or API not traced)
  kNoStack = 2,    // a link, but the stack could not be taken (stack id 0)
  kStackLost = 3,  // a link naming a stack the trace does not hold (damaged chunk)
};

// One kernel, copy or set with what is known about its launch.
struct GpuActivity {
  GpuActivityKind kind = GpuActivityKind::kKernel;
  LaunchJoin join = LaunchJoin::kNoLink;
  MemcpyKind memcpy_kind = MemcpyKind::kUnknown;  // copies only
  uint32_t pid = 0;
  uint32_t device_id = 0;
  uint32_t stream_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  StringId name = 0;   // kernels only: the mangled name as recorded
  uint64_t bytes = 0;  // copies and sets
  // The correlation id that was looked up: for a copy, the runtime id when only that
  // one had a link.
  uint32_t correlation_id = 0;
  uint32_t graph_id = 0;  // non-zero for work of a graph launch
  uint64_t graph_node_id = 0;
  uint64_t record_index = 0;  // position among the trace's kernels / memcpys / memsets

  // From the launch link; zero when join == kNoLink.
  StackId stack_id = 0;
  StringId launch_api = 0;  // outermost API of the launching call
  uint32_t launch_tid = 0;
  uint64_t launch_ns = 0;  // API enter

  uint64_t duration_ns() const { return end_ns > start_ns ? end_ns - start_ns : 0; }
  // What tells work of one kind apart: a kernel's name id, a copy's MemcpyKind, 0 for sets.
  uint32_t what() const {
    return kind == GpuActivityKind::kKernel   ? name
           : kind == GpuActivityKind::kMemcpy ? static_cast<uint32_t>(memcpy_kind)
                                              : 0;
  }
};

// What the launch link of one (pid, correlation id) says about the API call that made it:
// for a nested call, the outermost call's stack, API, thread and enter time.
struct LaunchLink {
  uint64_t launch_ns = 0;  // API enter
  StackId stack_id = 0;    // 0 when the stack could not be taken
  StringId api = 0;        // outermost API of the call, e.g. "cudaLaunchKernel"
  uint32_t tid = 0;
  // Link records seen for this id: 1, or more when a trace repeats one (the first one's
  // fields are kept). 0 only in entries that have no link.
  uint32_t records = 0;
};
static_assert(sizeof(LaunchLink) == 24, "one per correlation id of every process");

struct JoinCounts {
  uint64_t total = 0;
  uint64_t joined = 0;
  uint64_t no_link = 0;
  uint64_t no_stack = 0;
  uint64_t stack_lost = 0;

  uint64_t unmatched() const { return no_link + no_stack + stack_lost; }
  void Count(LaunchJoin join);
  JoinCounts& operator+=(const JoinCounts& other);
};

struct CorrelationStats {
  JoinCounts kernels;
  JoinCounts memcpys;
  JoinCounts memsets;
  uint64_t links = 0;
  uint64_t duplicate_links = 0;     // a second link for one (pid, correlation id): first wins
  uint64_t memcpy_runtime_ids = 0;  // copies that joined through runtime_correlation_id

  JoinCounts all() const;
};

// Streaming join. Feed links, stacks and GPU records in any order; each GPU record is
// emitted once its link is known, or at Finish() (emission order may then differ from
// arrival order). Links are kept for the whole run (a
// graph launch's link serves many kernels); they cost 24 bytes per correlation id in the
// recorded range of each process, and stay readable through FindLink.
class Correlator {
 public:
  using Emit = std::function<void(const GpuActivity&)>;
  explicit Correlator(Emit emit);
  ~Correlator();
  Correlator(const Correlator&) = delete;
  Correlator& operator=(const Correlator&) = delete;

  // Stacks the trace holds; a link naming any other non-zero id is kStackLost.
  void AddStack(StackId id);
  void AddLinks(std::span<const LaunchLinkRecord> links);
  void AddKernels(std::span<const KernelRecord> kernels);
  void AddMemcpys(std::span<const MemcpyRecord> memcpys);
  void AddMemsets(std::span<const MemsetRecord> memsets);
  // Promises that every link has been added: from now on a record without a link is
  // emitted at once as unmatched instead of waiting for Finish() (keeps arrival order).
  void NoMoreLinks();
  // Joins the records that arrived before their link; emits the rest as unmatched.
  void Finish();

  const CorrelationStats& stats() const { return stats_; }

  // The link of (pid, correlation id) added so far, or nullptr when there is none. Any API
  // call whose stack was taken has one: launches, copies and sets, and also allocations,
  // synchronizations and the other calls the injection library links (the report reads
  // their stacks here). Valid until the Correlator is destroyed.
  const LaunchLink* FindLink(uint32_t pid, uint32_t correlation_id) const;

 private:
  // Joins `activity` if its link is known; returns false when it has to wait.
  bool TryJoin(GpuActivity& activity, uint32_t fallback_correlation_id);
  void Submit(GpuActivity& activity, uint32_t fallback_correlation_id);
  void Deliver(const GpuActivity& activity);

  // FindLink, faster on runs of ids: moves the table's cache.
  const LaunchLink* FindLinkCached(uint32_t pid, uint32_t correlation_id);

  Emit emit_;
  CorrelationTable<LaunchLink> links_;
  std::vector<bool> known_stacks_;
  struct Waiting {
    GpuActivity activity;
    uint32_t fallback_correlation_id;
  };
  // Records whose link has not been seen yet. Retried whenever the list has doubled since
  // the last retry: linear time overall, and memory bounded by twice the records that
  // really wait (a trace's chunks of links and kernels interleave).
  std::vector<Waiting> waiting_;
  size_t next_retry_ = kMinRetry;
  static constexpr size_t kMinRetry = 1 << 16;
  void RetryWaiting();
  uint64_t kernels_seen_ = 0, memcpys_seen_ = 0, memsets_seen_ = 0;
  bool links_complete_ = false;
  CorrelationStats stats_;
};

struct Correlation {
  // Kernels, then copies, then sets, each in trace order.
  std::vector<GpuActivity> activities;
  CorrelationStats stats;
};

// Joins every GPU record of an in-memory trace to its launch.
Correlation Correlate(const Trace& trace);

// Feeds a loaded trace to `correlator` (stacks and links first, so every record joins on
// arrival and keeps trace order) and finishes it.
void CorrelateTrace(const Trace& trace, Correlator& correlator);

const char* LaunchJoinName(LaunchJoin join);

}  // namespace gpuperf
