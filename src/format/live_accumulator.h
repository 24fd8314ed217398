// Folds a recording's records into the totals, top tables and 1-second buckets of a live
// page (live_page.h), and publishes them. Runs on one thread (the injection library's
// writer thread, which sees every record anyway), so app threads pay nothing for it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/live_page.h"
#include "gpuperf/records.h"

namespace gpuperf::live {

class LiveAccumulator {
 public:
  // The text of a string id (kernel, API and device names), asked once per id.
  using NameLookup = std::function<std::string(StringId)>;
  explicit LiveAccumulator(NameLookup names);

  void AddKernel(const KernelRecord& kernel);
  void AddMemcpy(const MemcpyRecord& copy);
  void AddMemset(const MemsetRecord& set);
  void AddMemory(const MemoryRecord& memory);
  void AddSync(const SyncRecord& sync);
  void AddApi(const ApiRecord& call);
  void AddDevice(const DeviceRecord& device);
  void SetDeviceUuid(uint32_t device_id, const uint8_t (&uuid)[16]);

  // Folds what was added since the last call (device activity as a union of intervals,
  // allocations in time order) and writes the counters, tables and buckets into `page`.
  void Publish(Page& page, uint64_t now_ns, bool capturing);
  // The recorder's own counters (drops, costs).
  void PublishStats(Page& page, const uint64_t (&values)[kStatSlots]);

  // Records of devices beyond kMaxDevices (not in the page).
  uint64_t records_left_out() const { return records_left_out_; }

 private:
  struct Interval {
    uint32_t slot;
    uint64_t start;
    uint64_t end;
  };
  struct Totals {
    uint64_t ns = 0;
    uint64_t count = 0;
    uint64_t failures = 0;
  };

  // The device's row in the page; -1 when the table is full.
  int Slot(uint32_t device_id);
  DeviceBucket* DeviceBucketAt(uint32_t slot, uint64_t second);
  ProcessBucket* ProcessBucketAt(uint64_t second);
  // Adds each second's share of [start, end) to `field` of the device's buckets.
  void SpreadDevice(uint32_t slot, uint64_t start, uint64_t end, uint64_t DeviceBucket::*field);
  void FoldActivity();
  void FoldMemory();
  void FillKernels(Kernels& out);
  void FillApis(Apis& out);
  const std::string& DisplayName(StringId id, bool demangle);

  NameLookup names_;
  Counters counters_;
  std::unique_ptr<Ring> ring_;  // 60 KiB: on the heap
  std::vector<Interval> pending_;
  std::vector<MemoryRecord> pending_memory_;
  std::vector<uint64_t> active_until_;            // per slot: the end of the union folded so far
  std::vector<int64_t> memory_now_;               // per slot; may dip below 0 when frees come first
  std::unordered_map<uint64_t, Totals> kernels_;  // (slot << 32) | name
  std::unordered_map<StringId, Totals> apis_;
  std::unordered_map<StringId, std::string> display_names_;
  uint64_t records_left_out_ = 0;
};

}  // namespace gpuperf::live
