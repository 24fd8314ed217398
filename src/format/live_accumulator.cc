#include "format/live_accumulator.h"

#include <algorithm>
#include <cstring>

#include "base/cuda_errors.h"
#include "base/demangle.h"
#include "base/quantity.h"
#include "format/live_seqlock.h"
#include "format/live_text.h"

namespace gpuperf::live {
namespace {

CopyKind ToCopyKind(MemcpyKind kind) {
  switch (kind) {
    case MemcpyKind::kHtoD:
    case MemcpyKind::kHtoA:
      return kCopyHtoD;
    case MemcpyKind::kDtoH:
    case MemcpyKind::kAtoH:
      return kCopyDtoH;
    case MemcpyKind::kDtoD:
    case MemcpyKind::kAtoA:
    case MemcpyKind::kAtoD:
    case MemcpyKind::kDtoA:
      return kCopyDtoD;
    case MemcpyKind::kPtoP:
      return kCopyPeer;
    default:
      return kCopyOther;
  }
}

// GPU memory: host allocations (pageable, pinned) are not the device's.
bool IsDeviceMemory(MemoryKind kind) {
  return kind == MemoryKind::kDevice || kind == MemoryKind::kArray ||
         kind == MemoryKind::kManaged || kind == MemoryKind::kDeviceStatic ||
         kind == MemoryKind::kManagedStatic;
}

bool HasTimes(uint64_t start, uint64_t end) {
  return start != 0 && end >= start;
}

// Calls add(second, ns) with each second's share of [start, end). Only the last
// kRingSeconds seconds of a very long interval can land in the ring: the rest is skipped.
template <class Add>
void ForEachSecond(uint64_t start, uint64_t end, Add add) {
  if (end <= start) return;
  const uint64_t last_second = (end - 1) / kNsPerSecond;
  if (last_second >= kRingSeconds) {
    start = std::max(start, (last_second - kRingSeconds + 1) * kNsPerSecond);
  }
  for (uint64_t second = start / kNsPerSecond; second <= last_second; ++second) {
    const uint64_t from = std::max(start, second * kNsPerSecond);
    const uint64_t to = std::min(end, (second + 1) * kNsPerSecond);
    add(second, to - from);
  }
}

}  // namespace

LiveAccumulator::LiveAccumulator(NameLookup names)
    : names_(std::move(names)), ring_(std::make_unique<Ring>()) {}

int LiveAccumulator::Slot(uint32_t device_id) {
  for (uint32_t i = 0; i < counters_.device_count; ++i) {
    if (counters_.devices[i].device_id == device_id) return static_cast<int>(i);
  }
  if (counters_.device_count == kMaxDevices) {
    ++records_left_out_;
    return -1;
  }
  const uint32_t slot = counters_.device_count++;
  counters_.devices[slot].device_id = device_id;
  active_until_.push_back(0);
  memory_now_.push_back(0);
  return static_cast<int>(slot);
}

DeviceBucket* LiveAccumulator::DeviceBucketAt(uint32_t slot, uint64_t second) {
  DeviceBucket& bucket = ring_->devices[slot][second % kRingSeconds];
  if (bucket.second != second) {
    if (bucket.second > second) return nullptr;  // older than the ring keeps
    bucket = DeviceBucket{};
    bucket.second = second;
  }
  return &bucket;
}

ProcessBucket* LiveAccumulator::ProcessBucketAt(uint64_t second) {
  ProcessBucket& bucket = ring_->process[second % kRingSeconds];
  if (bucket.second != second) {
    if (bucket.second > second) return nullptr;
    bucket = ProcessBucket{};
    bucket.second = second;
  }
  return &bucket;
}

void LiveAccumulator::SpreadDevice(uint32_t slot, uint64_t start, uint64_t end,
                                   uint64_t DeviceBucket::*field) {
  ForEachSecond(start, end, [&](uint64_t second, uint64_t ns) {
    if (DeviceBucket* bucket = DeviceBucketAt(slot, second)) bucket->*field += ns;
  });
}

void LiveAccumulator::AddKernel(const KernelRecord& kernel) {
  const int slot = Slot(kernel.device_id);
  if (slot < 0) return;
  DeviceCounters& device = counters_.devices[slot];
  const bool timed = HasTimes(kernel.start_ns, kernel.end_ns);
  const uint64_t ns = timed ? kernel.end_ns - kernel.start_ns : 0;
  device.kernels++;
  device.kernel_ns += ns;
  Totals& totals = kernels_[(uint64_t{static_cast<uint32_t>(slot)} << 32) | kernel.name];
  totals.ns += ns;
  totals.count++;
  if (!timed) return;
  pending_.push_back({static_cast<uint32_t>(slot), kernel.start_ns, kernel.end_ns});
  SpreadDevice(slot, kernel.start_ns, kernel.end_ns, &DeviceBucket::kernel_ns);
  if (DeviceBucket* bucket = DeviceBucketAt(slot, kernel.start_ns / kNsPerSecond)) {
    bucket->kernels++;
  }
}

void LiveAccumulator::AddMemcpy(const MemcpyRecord& copy) {
  const int slot = Slot(copy.device_id);
  if (slot < 0) return;
  DeviceCounters& device = counters_.devices[slot];
  device.copies++;
  device.copy_bytes[ToCopyKind(copy.kind)] += copy.bytes;
  if (!HasTimes(copy.start_ns, copy.end_ns)) return;
  device.copy_ns += copy.end_ns - copy.start_ns;
  pending_.push_back({static_cast<uint32_t>(slot), copy.start_ns, copy.end_ns});
  SpreadDevice(slot, copy.start_ns, copy.end_ns, &DeviceBucket::copy_ns);
  if (DeviceBucket* bucket = DeviceBucketAt(slot, copy.start_ns / kNsPerSecond)) {
    bucket->copy_bytes += copy.bytes;
  }
}

void LiveAccumulator::AddMemset(const MemsetRecord& set) {
  const int slot = Slot(set.device_id);
  if (slot < 0) return;
  DeviceCounters& device = counters_.devices[slot];
  device.sets++;
  device.set_bytes += set.bytes;
  if (!HasTimes(set.start_ns, set.end_ns)) return;
  device.set_ns += set.end_ns - set.start_ns;
  pending_.push_back({static_cast<uint32_t>(slot), set.start_ns, set.end_ns});
  SpreadDevice(slot, set.start_ns, set.end_ns, &DeviceBucket::set_ns);
}

void LiveAccumulator::AddMemory(const MemoryRecord& memory) {
  if (IsDeviceMemory(memory.memory_kind) && memory.op != MemoryOp::kUnknown) {
    pending_memory_.push_back(memory);
  }
}

void LiveAccumulator::AddSync(const SyncRecord& sync) {
  counters_.syncs++;
  if (!HasTimes(sync.start_ns, sync.end_ns)) return;
  counters_.sync_ns += sync.end_ns - sync.start_ns;
  ForEachSecond(sync.start_ns, sync.end_ns, [&](uint64_t second, uint64_t ns) {
    if (ProcessBucket* bucket = ProcessBucketAt(second)) bucket->sync_ns += ns;
  });
}

void LiveAccumulator::AddApi(const ApiRecord& call) {
  const bool failed = IsCudaFailure(call.return_code);
  const uint64_t ns = HasTimes(call.start_ns, call.end_ns) ? call.end_ns - call.start_ns : 0;
  counters_.api_calls++;
  counters_.api_ns += ns;
  if (failed) counters_.api_failures++;
  Totals& totals = apis_[call.name];
  totals.count++;
  totals.ns += ns;
  if (failed) totals.failures++;
  if (call.start_ns == 0) return;
  if (ProcessBucket* bucket = ProcessBucketAt(call.start_ns / kNsPerSecond)) {
    bucket->api_calls++;
    if (failed) bucket->api_failures++;
  }
}

void LiveAccumulator::AddDevice(const DeviceRecord& record) {
  const int slot = Slot(record.device_id);
  if (slot < 0) return;
  CopyText(counters_.devices[slot].name, DisplayName(record.name, false));
}

void LiveAccumulator::SetDeviceUuid(uint32_t device_id, const uint8_t (&uuid)[16]) {
  const int slot = Slot(device_id);
  if (slot < 0) return;
  std::memcpy(counters_.devices[slot].uuid, uuid, sizeof(uuid));
  counters_.devices[slot].has_uuid = 1;
}

// Device activity as the union of its intervals: each interval adds only what lies past the
// end of the union so far. Work that arrives after later work was folded (CUPTI hands
// buffers over out of order now and then) adds only its part past that end.
void LiveAccumulator::FoldActivity() {
  auto earlier = [](const Interval& a, const Interval& b) {
    return a.slot != b.slot ? a.slot < b.slot : a.start < b.start;
  };
  // Work of one stream on one device comes in order: sorting is then a check.
  if (!std::is_sorted(pending_.begin(), pending_.end(), earlier)) {
    std::sort(pending_.begin(), pending_.end(), earlier);
  }
  for (const Interval& interval : pending_) {
    uint64_t& until = active_until_[interval.slot];
    const uint64_t from = std::max(interval.start, until);
    if (interval.end <= from) continue;
    counters_.devices[interval.slot].active_ns += interval.end - from;
    SpreadDevice(interval.slot, from, interval.end, &DeviceBucket::active_ns);
    until = interval.end;
  }
  pending_.clear();
}

void LiveAccumulator::FoldMemory() {
  std::sort(
      pending_memory_.begin(), pending_memory_.end(),
      [](const MemoryRecord& a, const MemoryRecord& b) { return a.timestamp_ns < b.timestamp_ns; });
  for (const MemoryRecord& memory : pending_memory_) {
    const int slot = Slot(memory.device_id);
    if (slot < 0) continue;
    DeviceCounters& device = counters_.devices[slot];
    int64_t& now = memory_now_[slot];
    if (memory.op == MemoryOp::kAllocation) {
      device.allocations++;
      now += static_cast<int64_t>(memory.bytes);
    } else {
      device.frees++;
      now -= static_cast<int64_t>(memory.bytes);
    }
    device.memory_current = now > 0 ? static_cast<uint64_t>(now) : 0;
    device.memory_peak = std::max(device.memory_peak, device.memory_current);
  }
  pending_memory_.clear();
}

const std::string& LiveAccumulator::DisplayName(StringId id, bool demangle) {
  auto [it, added] = display_names_.try_emplace(id);
  if (added) {
    std::string text = names_ ? names_(id) : std::string();
    it->second = demangle ? Demangle(text) : std::move(text);
  }
  return it->second;
}

void LiveAccumulator::FillKernels(Kernels& out) {
  std::vector<std::pair<uint64_t, const Totals*>> rows;
  rows.reserve(kernels_.size());
  for (const auto& [key, totals] : kernels_) rows.emplace_back(key, &totals);
  const size_t shown = std::min<size_t>(rows.size(), kMaxKernels);
  // Most time first; ties by key, so the table is the same for the same totals.
  std::partial_sort(
      rows.begin(), rows.begin() + shown, rows.end(), [](const auto& a, const auto& b) {
        return a.second->ns != b.second->ns ? a.second->ns > b.second->ns : a.first < b.first;
      });
  out = Kernels{};
  out.count = static_cast<uint32_t>(shown);
  for (size_t i = 0; i < rows.size(); ++i) {
    const Totals& totals = *rows[i].second;
    if (i >= shown) {
      out.other_ns += totals.ns;
      out.other_count += totals.count;
      continue;
    }
    KernelEntry& entry = out.entries[i];
    entry.device_id = counters_.devices[rows[i].first >> 32].device_id;
    entry.ns = totals.ns;
    entry.count = totals.count;
    CopyText(entry.name, DisplayName(static_cast<StringId>(rows[i].first), true));
  }
}

void LiveAccumulator::FillApis(Apis& out) {
  std::vector<std::pair<StringId, const Totals*>> rows;
  rows.reserve(apis_.size());
  for (const auto& [name, totals] : apis_) rows.emplace_back(name, &totals);
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.second->count != b.second->count ? a.second->count > b.second->count
                                              : a.first < b.first;
  });
  out = Apis{};
  // With more APIs than rows, the last row holds every API past the others.
  const size_t named = rows.size() <= kMaxApis ? rows.size() : kMaxApis - 1;
  for (size_t i = 0; i < rows.size(); ++i) {
    ApiEntry& entry = out.entries[std::min(i, named)];
    entry.calls += rows[i].second->count;
    entry.failures += rows[i].second->failures;
    entry.ns += rows[i].second->ns;
    if (i < named) CopyText(entry.name, DisplayName(rows[i].first, false));
  }
  if (named < rows.size()) CopyText(out.entries[named].name, "(other)");
  out.count = static_cast<uint32_t>(std::min<size_t>(rows.size(), kMaxApis));
}

void LiveAccumulator::Publish(Page& page, uint64_t now_ns, bool capturing) {
  FoldActivity();
  FoldMemory();
  counters_.updated_monotonic_ns = now_ns;
  counters_.updates++;
  counters_.capturing = capturing ? 1 : 0;
  // The tables are built outside the seqlocks: readers see each block odd only for a copy.
  auto kernels = std::make_unique<Kernels>();
  FillKernels(*kernels);
  auto apis = std::make_unique<Apis>();
  FillApis(*apis);
  SeqlockWrite(page.kernels, *kernels);
  SeqlockWrite(page.apis, *apis);
  SeqlockWrite(page.ring, *ring_);
  SeqlockWrite(page.counters, counters_);
}

void LiveAccumulator::PublishStats(Page& page, const uint64_t (&values)[kStatSlots]) {
  Stats stats;
  std::memcpy(stats.values, values, sizeof(stats.values));
  SeqlockWrite(page.stats, stats);
}

}  // namespace gpuperf::live
