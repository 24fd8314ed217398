// The tables of `gpuperf export --format parquet` (docs/parquet.md): one row per record,
// every table led by host, pid and rank so a whole job reads as one dataset. Versioned like
// the report JSON: columns are only added within a version; a removal or a change of
// meaning bumps kDatasetSchemaVersion.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "analyze/dataset/table_batch.h"

namespace gpuperf {

inline constexpr int kDatasetSchemaVersion = 1;

enum class DatasetTable : uint8_t {
  kProcesses,
  kRanks,
  kDevices,
  kKernels,
  kMemcpys,
  kMemsets,
  kApiCalls,
  kSyncs,
  kAllocations,
  kNvtxRanges,
  kCollectives,
  kCpuSamples,
  kOffCpu,
  kPower,
  kStacks,
  kFrames,
};
inline constexpr size_t kDatasetTableCount = 16;

const TableSpec& DatasetTableSpec(DatasetTable table);
std::span<const DatasetTable> AllDatasetTables();

}  // namespace gpuperf
