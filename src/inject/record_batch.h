// Records translated from one CUPTI buffer (or one flush), handed to the writer thread
// as a unit. Plain vectors: the batch is built on one thread and consumed on another.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpuperf/records.h"

namespace gpuperf::inject {

// A device's UUID from its CUPTI device record: the live page's join with NVML and DCGM
// (src/live). Not written to the trace.
struct DeviceUuid {
  uint32_t device_id = 0;
  uint8_t bytes[16] = {};
};

struct RecordBatch {
#define GPUPERF_BATCH_VECTOR(Type, name, plural, number) std::vector<Type##Record> plural;
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_BATCH_VECTOR)
#undef GPUPERF_BATCH_VECTOR
  std::vector<DeviceUuid> device_uuids;
  // PC sampling (variable length): the cubins first, then samples that point into them.
  std::vector<CubinRecord> cubins;
  std::vector<PcSampleRecord> pc_samples;

  size_t RecordCount() const {
    size_t n = 0;
#define GPUPERF_BATCH_COUNT(Type, name, plural, number) n += plural.size();
    GPUPERF_FIXED_RECORD_TYPES(GPUPERF_BATCH_COUNT)
#undef GPUPERF_BATCH_COUNT
    return n + cubins.size() + pc_samples.size();
  }
  // Approximate heap bytes, for the memory budget.
  size_t ApproxBytes() const {
    size_t n = 0;
#define GPUPERF_BATCH_BYTES(Type, name, plural, number) \
  n += plural.capacity() * sizeof(Type##Record);
    GPUPERF_FIXED_RECORD_TYPES(GPUPERF_BATCH_BYTES)
#undef GPUPERF_BATCH_BYTES
    n += cubins.capacity() * sizeof(CubinRecord);
    for (const PcSampleRecord& s : pc_samples) {
      n += sizeof(PcSampleRecord) + s.stalls.capacity() * sizeof(PcStallCount);
    }
    return n;
  }
};

}  // namespace gpuperf::inject
