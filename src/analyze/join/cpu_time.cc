#include "analyze/join/cpu_time.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace gpuperf {

bool IsGpuSyncFunction(std::string_view name) {
  // Runtime and driver alike: cudaStreamSynchronize, cuCtxSynchronize, cudaEventSynchronize,
  // cudaDeviceSynchronize, cudaThreadSynchronize... but not cudaStreamWaitEvent, which
  // only orders GPU work.
  if (name.starts_with("cu") && name.find("Synchronize") != std::string_view::npos) return true;
  // Copies without "Async" return when the copy is done: cudaMemcpy, cudaMemcpy2D,
  // cudaMemcpyToSymbol, cuMemcpyDtoH_v2, ...
  const bool copy = name.starts_with("cudaMemcpy") || name.starts_with("cuMemcpy");
  return copy && name.find("Async") == std::string_view::npos;
}

bool CpuTimeCollector::IsSyncApi(StringId name) {
  if (name >= sync_api_.size()) sync_api_.resize(name + 1, -1);
  int8_t& known = sync_api_[name];
  if (known < 0) {
    known = name < strings_.size() && IsGpuSyncFunction(strings_[name]) ? 1 : 0;
  }
  return known == 1;
}

std::vector<CpuTimeCollector::Window>& CpuTimeCollector::WindowsOf(uint32_t pid, uint32_t tid) {
  return windows_[uint64_t{pid} << 32 | tid];
}

void CpuTimeCollector::AddApis(std::span<const ApiRecord> records) {
  for (const ApiRecord& r : records) {
    if (r.end_ns > r.start_ns && IsSyncApi(r.name)) {
      WindowsOf(r.pid, r.tid).push_back({r.start_ns, r.end_ns});
    }
  }
}

void CpuTimeCollector::AddSyncs(std::span<const SyncRecord> records) {
  for (const SyncRecord& r : records) {
    // A stream waiting on an event blocks no CPU thread.
    if (r.kind == SyncKind::kStreamWaitEvent || r.tid == 0 || r.end_ns <= r.start_ns) continue;
    WindowsOf(r.pid, r.tid).push_back({r.start_ns, r.end_ns});
  }
}

void CpuTimeCollector::AddSamples(std::span<const CpuSampleRecord> records) {
  samples_.insert(samples_.end(), records.begin(), records.end());
}

void CpuTimeCollector::AddOffCpu(std::span<const OffCpuRecord> records) {
  off_cpu_.insert(off_cpu_.end(), records.begin(), records.end());
}

uint64_t CpuTimeCollector::Inside(const std::vector<Window>& windows, uint64_t start,
                                  uint64_t end) {
  // The first window that ends after `start`.
  auto it = std::upper_bound(windows.begin(), windows.end(), start,
                             [](uint64_t t, const Window& w) { return t < w.end; });
  uint64_t inside = 0;
  for (; it != windows.end() && it->start < end; ++it) {
    inside += std::min(end, it->end) - std::max(start, it->start);
  }
  return inside;
}

std::vector<CpuTimeEntry> CpuTimeCollector::Finish() {
  for (auto& [thread, windows] : windows_) {
    std::sort(windows.begin(), windows.end(),
              [](const Window& a, const Window& b) { return a.start < b.start; });
    std::vector<Window> merged;
    for (const Window& w : windows) {
      if (!merged.empty() && w.start <= merged.back().end) {
        merged.back().end = std::max(merged.back().end, w.end);
      } else {
        merged.push_back(w);
      }
    }
    windows.swap(merged);
  }
  auto waits = [this](uint32_t pid, uint32_t tid) -> const std::vector<Window>* {
    auto it = windows_.find(uint64_t{pid} << 32 | tid);
    return it == windows_.end() ? nullptr : &it->second;
  };
  using Key = std::tuple<uint32_t, uint32_t, StackId, CpuTimeKind, OffCpuReason, bool>;
  std::map<Key, CpuTimeEntry> sums;
  auto add = [&sums](const CpuTimeEntry& e) {
    auto [it, added] =
        sums.try_emplace(Key{e.pid, e.tid, e.stack, e.kind, e.reason, e.gpu_wait}, e);
    if (!added) {
      it->second.ns += e.ns;
      it->second.count += e.count;
    }
  };
  for (const CpuSampleRecord& s : samples_) {
    const std::vector<Window>* w = waits(s.pid, s.tid);
    const bool in_sync = w != nullptr && Inside(*w, s.timestamp_ns, s.timestamp_ns + 1) > 0;
    add({s.pid, s.tid, s.stack_id, CpuTimeKind::kOnCpu, OffCpuReason::kOther, in_sync, s.weight_ns,
         1});
  }
  for (const OffCpuRecord& o : off_cpu_) {
    const std::vector<Window>* w = waits(o.pid, o.tid);
    // A run of intervals spans the on-CPU time between them too: most of the span inside
    // the thread's GPU waits makes it a wait.
    const uint64_t span = o.end_ns > o.start_ns ? o.end_ns - o.start_ns : 0;
    const bool in_sync = w != nullptr && span > 0 && 2 * Inside(*w, o.start_ns, o.end_ns) >= span;
    add({o.pid, o.tid, o.stack_id, CpuTimeKind::kOffCpu, o.reason, in_sync, o.blocked_ns, o.count});
  }
  std::vector<CpuTimeEntry> out;
  out.reserve(sums.size());
  for (auto& [key, entry] : sums) out.push_back(entry);
  return out;
}

}  // namespace gpuperf
