#include "analyze/timeline/timeline_scan.h"

#include <algorithm>
#include <tuple>

#include "analyze/timeline/record_order.h"

namespace gpuperf {

void BusyHistogram::AddInterval(uint64_t start_ns, uint64_t end_ns) {
  if (end_ns <= start_ns) return;
  if (busy_ns_.empty()) {
    origin_ns_ = start_ns - start_ns % bucket_ns_;
    frontier_ns_ = start_ns;
  }
  if (start_ns < origin_ns_) start_ns = origin_ns_;  // before the first kernel: clip
  if (end_ns <= frontier_ns_) return;                // already covered
  AddCovered(std::max(start_ns, frontier_ns_), end_ns);
  frontier_ns_ = end_ns;
}

void BusyHistogram::AddCovered(uint64_t start_ns, uint64_t end_ns) {
  while ((end_ns - origin_ns_) / bucket_ns_ >= kMaxBuckets) Widen();
  const size_t last = (end_ns - 1 - origin_ns_) / bucket_ns_;
  if (busy_ns_.size() <= last) busy_ns_.resize(last + 1, 0);
  uint64_t at = start_ns;
  while (at < end_ns) {
    const size_t bucket = (at - origin_ns_) / bucket_ns_;
    const uint64_t bucket_end = origin_ns_ + (bucket + 1) * bucket_ns_;
    const uint64_t until = std::min(end_ns, bucket_end);
    busy_ns_[bucket] += until - at;
    at = until;
  }
}

void BusyHistogram::Widen() {
  for (size_t i = 0; i < busy_ns_.size(); i += 2) {
    busy_ns_[i / 2] = busy_ns_[i] + (i + 1 < busy_ns_.size() ? busy_ns_[i + 1] : 0);
  }
  busy_ns_.resize((busy_ns_.size() + 1) / 2);
  bucket_ns_ *= 2;
}

uint32_t TimelineIndex::ProcessIndex(uint32_t pid) {
  // Records come in runs of one process: skip the hash lookup for those.
  if (!pids.empty() && pid == last_pid_) return last_process_index_;
  auto [it, inserted] = processes.try_emplace(pid);
  if (inserted) {
    it->second.index = static_cast<uint32_t>(pids.size());
    pids.push_back(pid);
  }
  last_pid_ = pid;
  last_process_index_ = it->second.index;
  return it->second.index;
}

uint32_t TimelineIndex::ProcessOrder(uint32_t pid) {
  const uint32_t index = ProcessIndex(pid);
  const int32_t rank = processes[pid].rank;
  return rank >= 0 ? static_cast<uint32_t>(rank) : static_cast<uint32_t>(max_rank + 1) + index;
}

TimelineScan::TimelineScan(const TimelineOptions& options, const TimelineWindow& window)
    : options_(options), index_(std::make_unique<TimelineIndex>()) {
  index_->window = window;
  index_->symbols = std::make_unique<SymbolTable>(index_->strings, options.display);
}

void TimelineScan::OnString(StringId id, std::string_view text) {
  if (index_->strings.size() <= id) index_->strings.resize(id + 1);
  index_->strings[id] = std::string(text);
}

void TimelineScan::OnStack(const StackRecord& stack) {
  // Whole: the Python frames come after the native PCs.
  index_->stacks[stack.id] = stack;
}

void TimelineScan::OnSymbol(const SymbolRecord& symbol) {
  index_->symbols->AddSymbol(symbol);
}

void TimelineScan::OnPythonCode(const PythonCodeRecord& code) {
  index_->symbols->AddPythonCode(code);
}

void TimelineScan::OnModule(std::span<const ModuleRecord> records) {
  for (const ModuleRecord& module : records) index_->symbols->AddModule(module);
}

void TimelineScan::OnProcess(std::span<const ProcessRecord> records) {
  for (const ProcessRecord& process : records) {
    index_->ProcessIndex(process.pid);
    index_->processes[process.pid].command = process.command;
    index_->processes[process.pid].hostname = process.hostname;
  }
  index_->recording_loss.AddProcesses(records);
}

void TimelineScan::OnStat(std::span<const StatRecord> records) {
  index_->recording_loss.AddStats(records);
}

void TimelineScan::OnRank(std::span<const RankRecord> records) {
  for (const RankRecord& rank : records) {
    index_->ProcessIndex(rank.pid);
    index_->processes[rank.pid].rank = rank.rank;
    index_->max_rank = std::max(index_->max_rank, rank.rank);
  }
}

void TimelineScan::OnThread(std::span<const ThreadRecord> records) {
  for (const ThreadRecord& thread : records) {
    index_->ProcessIndex(thread.pid);
    if (thread.name) index_->thread_names[{thread.pid, thread.tid}] = thread.name;
    index_->symbols->AddThread(thread);
  }
}

ScannedDevice& TimelineScan::Device(uint32_t pid, uint32_t device) {
  index_->ProcessIndex(pid);
  ScannedDevice& scanned = index_->devices[{pid, device}];
  if (!scanned.busy) scanned.busy = std::make_unique<BusyHistogram>(options_.busy_bucket_ns);
  return scanned;
}

void TimelineScan::OnDevice(std::span<const DeviceRecord> records) {
  for (const DeviceRecord& device : records)
    Device(device.pid, device.device_id).name = device.name;
}

void TimelineScan::OnApi(std::span<const ApiRecord> records) {
  for (const ApiRecord& api : records) {
    if (!index_->window.Contains(api.start_ns)) {
      ++index_->left_out.api_calls;
      continue;
    }
    ++index_->drawn.api_calls;
    if (api.correlation_id == 0) continue;
    index_->ProcessIndex(api.pid);
    index_->correlations.At(api.pid, api.correlation_id).has_launch_api = 1;
  }
}

void TimelineScan::OnLaunchLink(std::span<const LaunchLinkRecord> records) {
  for (const LaunchLinkRecord& link : records) {
    if (link.correlation_id == 0 || link.stack_id >= (1u << 22)) continue;
    index_->ProcessIndex(link.pid);
    index_->correlations.At(link.pid, link.correlation_id).stack_id = link.stack_id;
  }
}

bool TimelineScan::CountGpuActivity(uint32_t pid, uint32_t correlation_id, uint64_t start_ns) {
  if (!index_->window.Contains(start_ns)) return false;
  if (correlation_id == 0) return true;
  index_->ProcessIndex(pid);
  CorrelationSlot& slot = index_->correlations.At(pid, correlation_id);
  if (slot.gpu_total < kMaxFlowsPerLaunch) slot.gpu_total = slot.gpu_total + 1;
  return true;
}

void TimelineScan::OnKernel(std::span<const KernelRecord> records) {
  for (const KernelRecord& kernel : records) {
    const bool drawn = CountGpuActivity(kernel.pid, kernel.correlation_id, kernel.start_ns);
    ++(drawn ? index_->drawn : index_->left_out).kernels;
  }
  // Busy time per device: merge each device's kernels in start order. Each stream's
  // kernels come in order; the streams of a device interleave, so their intervals are
  // sorted (as plain pairs, which is quick) unless they happen to be in order already.
  OrderByGroup(
      records, [](const KernelRecord& k) { return std::make_pair(k.pid, k.device_id); },
      [](const KernelRecord&, const KernelRecord&) { return false; }, order_);
  for (size_t i = 0; i < order_.size();) {
    const KernelRecord& first = records[order_[i]];
    intervals_.clear();
    for (; i < order_.size(); ++i) {
      const KernelRecord& kernel = records[order_[i]];
      if (kernel.pid != first.pid || kernel.device_id != first.device_id) break;
      intervals_.emplace_back(kernel.start_ns, kernel.end_ns);
    }
    if (!std::is_sorted(intervals_.begin(), intervals_.end())) {
      std::sort(intervals_.begin(), intervals_.end());
    }
    BusyHistogram& busy = *Device(first.pid, first.device_id).busy;
    for (const auto& [start_ns, end_ns] : intervals_) busy.AddInterval(start_ns, end_ns);
  }
}

void TimelineScan::OnMemcpy(std::span<const MemcpyRecord> records) {
  for (const MemcpyRecord& copy : records) {
    const bool drawn = CountGpuActivity(copy.pid, copy.correlation_id, copy.start_ns);
    ++(drawn ? index_->drawn : index_->left_out).copies;
  }
}

void TimelineScan::OnMemset(std::span<const MemsetRecord> records) {
  for (const MemsetRecord& set : records) {
    const bool drawn = CountGpuActivity(set.pid, set.correlation_id, set.start_ns);
    ++(drawn ? index_->drawn : index_->left_out).sets;
  }
}

void TimelineScan::OnNvtx(std::span<const NvtxRecord> records) {
  for (const NvtxRecord& nvtx : records) {
    // Ranges that never ended are not drawn at all (TimelineStats counts them).
    if (nvtx.kind != NvtxKind::kMark && (nvtx.end_ns == 0 || nvtx.end_ns < nvtx.start_ns)) {
      continue;
    }
    ++(index_->window.Contains(nvtx.start_ns) ? index_->drawn : index_->left_out).nvtx;
  }
}

void TimelineScan::OnClock(std::span<const ClockRecord> records) {
  if (index_->first_clock_monotonic_ns == 0 && !records.empty()) {
    index_->first_clock_monotonic_ns = records.front().monotonic_ns;
    index_->first_clock_realtime_ns = records.front().realtime_ns;
  }
}

}  // namespace gpuperf
