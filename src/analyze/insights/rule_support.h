// Small helpers the insight rules share: evidence of each unit, medians, names, and the
// launch of a piece of GPU work.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/insights/insight_input.h"
#include "analyze/report/insight.h"

namespace gpuperf::insights {

inline Evidence CountOf(std::string name, uint64_t value) {
  return {std::move(name), static_cast<double>(value), EvidenceUnit::kCount};
}
inline Evidence TimeOf(std::string name, uint64_t ns) {
  return {std::move(name), static_cast<double>(ns), EvidenceUnit::kNanoseconds};
}
inline Evidence BytesOf(std::string name, uint64_t bytes) {
  return {std::move(name), static_cast<double>(bytes), EvidenceUnit::kBytes};
}
inline Evidence ShareOf(std::string name, double fraction) {
  return {std::move(name), fraction, EvidenceUnit::kFraction};
}

// "3 gaps", "1 gap".
std::string Plural(uint64_t n, std::string_view one, std::string_view many = {});

// The middle value (the lower one of an even count); 0 for none. Reorders `values`.
uint64_t Median(std::vector<uint64_t>& values);

// First start to last end of a device's work.
uint64_t ActiveSpan(const DeviceWork& device);

// What a rule about lost GPU time names at all: 1 ms of it, and 1% of the device's active span
// (the rules of idle gaps, launch-bound phases, sync stalls and copies share this bar).
inline constexpr uint64_t kWorthNamingNs = 1'000'000;
inline constexpr double kWorthNamingShare = 0.01;

// The launch link of a piece of work: by its own id, else (copies) its runtime call's id.
const LaunchLink* LinkOfWork(const InsightInput& input, uint32_t pid, const GpuWork& work);
// The place (InsightInput::Place) it was launched from; 0 when unknown.
uint32_t PlaceOfWork(InsightInput& input, uint32_t pid, const GpuWork& work);

// Copies of one device grouped by direction and place, with their totals; the calls'
// CPU time where the trace has their API records.
struct CopyGroup {
  MemcpyKind kind = MemcpyKind::kUnknown;
  uint32_t place = 0;
  uint64_t copies = 0, bytes = 0, gpu_ns = 0, cpu_ns = 0, calls = 0;
};
template <class Keep>
std::vector<CopyGroup> GroupCopies(InsightInput& input, uint32_t pid, const DeviceWork& device,
                                   Keep keep) {
  std::vector<CopyGroup> groups;
  for (const GpuWork& w : device.work) {
    if (w.kind != GpuActivityKind::kMemcpy || !keep(w)) continue;
    const uint32_t place = PlaceOfWork(input, pid, w);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const CopyGroup& g) {
      return g.kind == w.copy_kind && g.place == place;
    });
    if (it == groups.end()) it = groups.insert(groups.end(), CopyGroup{w.copy_kind, place});
    ++it->copies;
    it->bytes += w.bytes;
    it->gpu_ns += w.duration();
    if (const report::ApiCall* call = input.ApiCall(pid, w.correlation_id)) {
      it->cpu_ns += call->end - call->start;
      ++it->calls;
    }
  }
  return groups;
}

// " from <frame>" naming where a stack is in a finding's sentence: its innermost Python
// frame (the user's code) if it has one, else its innermost frame; "" for no stack.
std::string FromWhere(const std::vector<std::string>& stack);

// A kernel's name as the report shows it (demangled, shortened).
std::string KernelName(const InsightInput& input, StringId name);

// cudaStreamSynchronize, cudaDeviceSynchronize, cuEventSynchronize, ...: calls that wait
// for the GPU to finish work.
bool IsSynchronizeCall(std::string_view api);

// A synchronize call of a process, on thread `tid`.
struct SyncCall {
  const report::ApiCall* call = nullptr;
  uint32_t tid = 0;
};
// Every synchronize call of a process, by end time.
std::vector<SyncCall> SynchronizeCalls(const InsightInput& input, uint32_t pid);
// The synchronization that left the GPU idle in `gap`: a call already waiting when the
// device ran out of work (it started before the gap) that returned inside the gap. A call
// made in the middle of a gap waited for nothing. nullptr when there is none.
const SyncCall* SyncThatDrained(const std::vector<SyncCall>& syncs, const Gap& gap);

// A name that says what a copy direction is: "host-to-device".
std::string_view CopyDirection(MemcpyKind kind);

}  // namespace gpuperf::insights
