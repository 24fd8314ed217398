// PC samples of one process, summed by (cubin CRC, function, PC offset, stall reason) between
// two writer cycles, then handed to the trace as PcSampleRecords (readers add them up). Kept
// free of CUPTI: the CUPTI side (cupti/pc_sampling.cc) translates its buffers into Add calls.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "gpuperf/records.h"
#include "inject/name_table.h"

namespace gpuperf::inject {

class PcSampleTable {
 public:
  // The name of a stall reason index (CUPTI numbers them per device; the names are global).
  void SetStallName(uint32_t index, std::string_view name);

  void Add(uint64_t cubin_crc, std::string_view function, uint64_t pc_offset,
           uint32_t correlation_id, uint32_t stall_index, uint64_t samples);

  // Everything added since the last call, as records (names interned), then forgets it.
  // Returns the number of samples in them.
  uint64_t Drain(uint32_t pid, NameTable& names, std::vector<PcSampleRecord>& out);

  bool empty() const;

 private:
  using Key = std::tuple<uint64_t, std::string, uint64_t, uint32_t>;  // crc, function, pc, corr
  mutable std::mutex mutex_;
  std::map<Key, std::map<uint32_t, uint64_t>> samples_;  // -> stall index -> samples
  std::unordered_map<uint32_t, std::string> stall_names_;
};

}  // namespace gpuperf::inject
