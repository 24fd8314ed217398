#include "inject/pc_sample_table.h"

namespace gpuperf::inject {

void PcSampleTable::SetStallName(uint32_t index, std::string_view name) {
  std::lock_guard<std::mutex> lock(mutex_);
  stall_names_[index] = std::string(name);
}

void PcSampleTable::Add(uint64_t cubin_crc, std::string_view function, uint64_t pc_offset,
                        uint32_t correlation_id, uint32_t stall_index, uint64_t samples) {
  if (samples == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  samples_[Key{cubin_crc, std::string(function), pc_offset, correlation_id}][stall_index] +=
      samples;
}

uint64_t PcSampleTable::Drain(uint32_t pid, NameTable& names, std::vector<PcSampleRecord>& out) {
  std::map<Key, std::map<uint32_t, uint64_t>> taken;
  std::unordered_map<uint32_t, std::string> stall_names;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    taken.swap(samples_);
    stall_names = stall_names_;
  }
  uint64_t total = 0;
  auto lock = names.Lock();
  for (const auto& [key, stalls] : taken) {
    PcSampleRecord record;
    record.pid = pid;
    record.cubin_crc = std::get<0>(key);
    record.function = names.InternLocked(std::get<1>(key));
    record.pc_offset = std::get<2>(key);
    record.correlation_id = std::get<3>(key);
    for (const auto& [index, samples] : stalls) {
      auto name = stall_names.find(index);
      const std::string reason =
          name != stall_names.end() ? name->second : "stall_" + std::to_string(index);
      record.stalls.push_back({names.InternLocked(reason), samples});
      total += samples;
    }
    out.push_back(std::move(record));
  }
  return total;
}

bool PcSampleTable::empty() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return samples_.empty();
}

}  // namespace gpuperf::inject
