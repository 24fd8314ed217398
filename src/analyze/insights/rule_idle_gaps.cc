// gpu_idle_gaps: stretches of at least 100 µs during which a device ran nothing, grouped
// by what the CPU did meanwhile: one-time start-up work (loading GPU code, JIT, the first
// long call of a kind) when it filled a quarter of the gap; else a CUDA call that covered
// half of it (named, with its stack; copies and allocations get their own advice); else
// code outside CUDA, and then the stack is that of the call that ended the gap: where the
// CPU was when it fed the GPU again. Gaps a synchronization drained are sync_stalls'.
#include <map>
#include <tuple>
#include <unordered_map>

#include "analyze/insights/rule_support.h"
#include "analyze/insights/rules.h"
#include "analyze/report/call_reach.h"
#include "base/units.h"

namespace gpuperf::insights {
namespace {

constexpr uint64_t kMinGapNs = 100'000;          // shorter: launch latency, not idling
constexpr double kCallShare = 0.5;               // a call covering half a gap is its cause
constexpr double kStartupShare = 0.25;           // start-up work filling a quarter is the cause
constexpr uint64_t kStartupCallNs = 10'000'000;  // a first call this long is start-up work

enum class Cause : uint8_t { kOutsideCuda, kStartup, kAllocation, kCopy, kCall };

struct IdleGapKey {
  Cause cause;
  StringId api;    // the call (kAllocation, kCopy, kCall)
  uint32_t place;  // InsightInput::Place of the call, or of the launch that ended the gap
  auto operator<=>(const IdleGapKey&) const = default;
};

// How much of [begin, end) the sorted intervals cover (they may overlap each other).
uint64_t Overlap(const std::vector<Interval>& intervals, uint64_t begin, uint64_t end) {
  uint64_t covered = 0, cursor = begin;
  for (const Interval& iv : intervals) {
    if (iv.begin >= end) break;
    const uint64_t from = std::max(iv.begin, cursor), to = std::min(iv.end, end);
    if (to > from) {
      covered += to - from;
      cursor = to;
    }
  }
  return covered;
}

struct IdleGapGroup {
  uint64_t gaps = 0, idle_ns = 0, longest_ns = 0;
  uint64_t first_at = 0;
  std::map<StringId, uint64_t> calls;  // start-up: ns in each call
  // Start-up: where the call that covered the most was made.
  uint32_t place = 0;
  uint64_t place_ns = 0;
};

bool IsLoadingCall(std::string_view api) {
  return api.find("LibraryLoad") != std::string_view::npos ||
         api.find("ModuleLoad") != std::string_view::npos ||
         api.find("LibraryGetKernel") != std::string_view::npos ||
         api.find("ModuleGetFunction") != std::string_view::npos;
}

bool IsCopyCall(std::string_view api) {
  return api.find("Memcpy") != std::string_view::npos;
}

bool IsAllocationCall(std::string_view api) {
  return api.find("Malloc") != std::string_view::npos ||
         api.find("MemAlloc") != std::string_view::npos ||
         api.find("Free") != std::string_view::npos ||
         api.find("HostAlloc") != std::string_view::npos;
}

// The API call that overlaps [begin, end) the most, on any thread of the process. Nested
// calls never overlap more than the call around them, which wins the tie (earlier start).
class CallFinder {
 public:
  explicit CallFinder(const InsightInput& input, uint32_t pid) : threads_(input.Threads(pid)) {
    reach_.reserve(threads_.size());
    for (const auto& thread : threads_) reach_.emplace_back(thread->calls);
  }

  struct Found {
    const report::ApiCall* call = nullptr;
    uint32_t tid = 0;
    uint64_t overlap = 0;
  };

  // Calls `visit(found)` for every call overlapping [begin, end).
  template <class Visit>
  void ForEach(uint64_t begin, uint64_t end, Visit visit) {
    for (size_t t = 0; t < threads_.size(); ++t) {
      const auto& calls = threads_[t]->calls;
      reach_[t].ForEachOverlapping(begin, end, [&](size_t i) {
        const report::ApiCall& c = calls[i];
        visit(Found{&c, threads_[t]->tid, std::min(c.end, end) - std::max(c.start, begin)});
      });
    }
  }

 private:
  std::span<const std::unique_ptr<report::ThreadCalls>> threads_;
  std::vector<report::CallReach> reach_;  // per thread
};

Insight Describe(InsightInput& input, uint32_t pid, uint32_t device, const IdleGapKey& key,
                 const IdleGapGroup& g, uint64_t span) {
  Insight in;
  in.rule = "gpu_idle_gaps";
  in.pid = pid;
  in.device = device;
  in.stake = StakeKind::kGpuIdle;
  in.at_stake_ns = g.idle_ns;
  const std::string head = "GPU " + std::to_string(device) + " sat idle " +
                           FormatDuration(g.idle_ns) + " in " + Plural(g.gaps, "gap") +
                           " of 100 µs or more";
  const std::string api = input.Str(key.api);
  in.stack = input.PlaceStack(key.cause == Cause::kStartup ? g.place : key.place);
  const std::string where = FromWhere(in.stack);
  switch (key.cause) {
    case Cause::kOutsideCuda:
      in.finding = head + " while the CPU ran code outside CUDA before launching more work" + where;
      in.stack_role = "the call that ended the gaps";
      in.suggestion =
          "Find what this thread does before this launch (data loading, Python-side work, "
          "logging, host preprocessing) and take it off the GPU's critical path: prefetch "
          "(DataLoader workers, pinned memory), queue the next step's work earlier, or overlap "
          "the CPU work with GPU work already queued.";
      break;
    case Cause::kStartup: {
      std::vector<std::pair<uint64_t, StringId>> calls;
      for (auto [name, ns] : g.calls) calls.emplace_back(ns, name);
      std::sort(calls.rbegin(), calls.rend());
      std::string names;
      for (size_t i = 0; i < calls.size() && i < 3; ++i) {
        names +=
            (i ? ", " : "") + input.Str(calls[i].second) + " " + FormatDuration(calls[i].first);
      }
      in.finding = head + " during one-time start-up work (" +
                   (names.empty() ? std::string("CUDA loading GPU code") : names) + ")";
      in.stack_role = "the longest start-up call";
      in.suggestion =
          "One-time cost of creating the CUDA context and loading GPU code on first use (lazy "
          "loading), not a steady-state problem: keep it out of measurements (warm up first, "
          "or record with --delay), or set CUDA_MODULE_LOADING=EAGER to pay it all at start.";
      break;
    }
    case Cause::kCopy:
      in.finding = head + " while the CPU was in " + api + where;
      in.stack_role = "the " + api + " call";
      in.suggestion =
          "The copy call held the CPU while the GPU had nothing queued: a copy to or from "
          "pageable memory or on a synchronous stream returns only when done. Pin the host "
          "memory (see pageable_copies) and queue the next work before waiting for the copy.";
      break;
    case Cause::kAllocation:
      in.finding = head + " while the CPU was allocating or freeing memory in " + api + where;
      in.stack_role = "the " + api + " call";
      in.suggestion =
          "Allocate once before the loop and reuse the buffers, or use a caching or "
          "stream-ordered allocator (cudaMallocAsync; PyTorch's caching allocator); cudaFree "
          "also waits for the whole device.";
      break;
    case Cause::kCall:
      in.finding = head + " while the CPU was in " + api + where;
      in.stack_role = "the " + api + " call";
      in.suggestion =
          "The GPU gets no new work until this call returns: move it out of the loop, issue "
          "the GPU work before it, or use an asynchronous variant.";
      break;
  }
  in.evidence = {CountOf("gaps", g.gaps), TimeOf("idle", g.idle_ns),
                 TimeOf("longest_gap", g.longest_ns),
                 ShareOf("share_of_active_span", span ? double(g.idle_ns) / span : 0),
                 TimeOf("first_gap_at", input.SinceOrigin(g.first_at))};
  return in;
}

}  // namespace

void GpuIdleGaps(InsightInput& input, std::vector<Insight>& out) {
  for (const ProcessWork& process : input.processes()) {
    const uint32_t pid = process.pid;
    CallFinder finder(input, pid);
    const std::vector<SyncCall> syncs = SynchronizeCalls(input, pid);
    std::unordered_map<StringId, uint64_t> first_call;  // name -> start of its first call
    for (const auto& thread : input.Threads(pid)) {
      for (const report::ApiCall& c : thread->calls) {
        auto [it, inserted] = first_call.emplace(c.name, c.start);
        if (!inserted) it->second = std::min(it->second, c.start);
      }
    }
    for (const DeviceWork& device : process.devices) {
      const uint64_t span = ActiveSpan(device);
      std::map<IdleGapKey, IdleGapGroup> groups;
      for (const Gap& gap : InsightInput::Gaps(device, kMinGapNs)) {
        if (SyncThatDrained(syncs, gap) != nullptr) continue;  // sync_stalls' finding
        IdleGapKey key{Cause::kOutsideCuda, 0, 0};
        // What the CPU did: the call covering most of the gap, and how much of the gap
        // was start-up work (first long calls, loading, JIT).
        CallFinder::Found longest;
        uint64_t startup_calls_ns = 0;
        CallFinder::Found longest_startup;
        std::vector<std::pair<StringId, uint64_t>> startup_calls;
        finder.ForEach(gap.begin, gap.end, [&](const CallFinder::Found& f) {
          // Nested calls never overlap more than the call around them, which wins the
          // tie by starting earlier.
          if (f.overlap > longest.overlap || (f.overlap == longest.overlap && longest.call &&
                                              f.call->start < longest.call->start)) {
            longest = f;
          }
          const bool first = first_call[f.call->name] == f.call->start;
          if (IsLoadingCall(input.Str(f.call->name)) ||
              (first && f.call->end - f.call->start >= kStartupCallNs)) {
            startup_calls_ns += f.overlap;
            startup_calls.emplace_back(f.call->name, f.overlap);
            if (f.overlap > longest_startup.overlap) longest_startup = f;
          }
        });
        const uint64_t startup_ns =
            std::max(startup_calls_ns, Overlap(process.loading, gap.begin, gap.end));
        if (startup_ns >= kStartupShare * gap.duration()) {
          key = {Cause::kStartup, 0, 0};
        } else if (longest.call != nullptr && longest.overlap >= kCallShare * gap.duration()) {
          const report::ApiCall& call = *longest.call;
          const std::string& api = input.Str(call.name);
          key = {IsAllocationCall(api) ? Cause::kAllocation
                 : IsCopyCall(api)     ? Cause::kCopy
                                       : Cause::kCall,
                 call.name, input.PlaceOf(input.Link(pid, call.correlation_id))};
        } else {
          key = {Cause::kOutsideCuda, 0, PlaceOfWork(input, pid, device.work[gap.next])};
        }
        IdleGapGroup& g = groups[key];
        if (g.gaps++ == 0) g.first_at = gap.begin;
        g.idle_ns += gap.duration();
        g.longest_ns = std::max(g.longest_ns, gap.duration());
        if (key.cause == Cause::kStartup && longest_startup.call != nullptr) {
          for (auto [name, ns] : startup_calls) g.calls[name] += ns;
          if (longest_startup.overlap > g.place_ns) {
            g.place = input.PlaceOf(input.Link(pid, longest_startup.call->correlation_id));
            g.place_ns = longest_startup.overlap;
          }
        }
      }
      for (const auto& [key, g] : groups) {
        if (g.idle_ns < kWorthNamingNs || g.idle_ns < kWorthNamingShare * span) continue;
        out.push_back(Describe(input, pid, device.device, key, g, span));
      }
    }
  }
}

}  // namespace gpuperf::insights
