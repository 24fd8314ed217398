// The messages of pprof's profile.proto that gpuperf writes, with the bookkeeping the
// format asks for: one string table whose entry 0 is "", non-zero unique ids, one
// Function per (name, system name, file), one Location per (mapping, address, lines),
// and samples with the same stack and labels merged. Serialized with ProtoWriter; field
// numbers as in the format's public schema (see tests/proto/profile.proto).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gpuperf {

class PprofProfileBuilder {
 public:
  struct Line {
    uint64_t function_id = 0;
    int64_t line = 0;
    bool operator<(const Line& other) const {
      return std::tie(function_id, line) < std::tie(other.function_id, other.line);
    }
  };
  // A string label (key and value as string table indexes).
  using Label = std::pair<int64_t, int64_t>;

  PprofProfileBuilder();

  // The string table index of `text`.
  int64_t Str(std::string_view text);

  // Value types, in the order of every sample's values.
  void AddSampleType(std::string_view type, std::string_view unit);
  void SetDefaultSampleType(std::string_view type) { default_sample_type_ = Str(type); }
  void SetPeriod(std::string_view type, std::string_view unit, int64_t period);
  void SetTime(int64_t time_nanos, int64_t duration_nanos) {
    time_nanos_ = time_nanos;
    duration_nanos_ = duration_nanos;
  }
  void AddComment(std::string_view text) { comments_.push_back(Str(text)); }

  // A mapping of an object file loaded at [start, limit); returns its id.
  uint64_t AddMapping(uint64_t start, uint64_t limit, uint64_t file_offset, std::string_view file,
                      std::string_view build_id);
  uint64_t Function(std::string_view name, std::string_view system_name, std::string_view file);
  // `lines`: the functions at this address, innermost (inlined) first, caller last.
  // mapping_id 0: no mapping (Python frames, frames gpuperf adds).
  uint64_t Location(uint64_t mapping_id, uint64_t address, std::span<const Line> lines);
  // Adds `values` (one per sample type) to the sample of this stack (location ids, leaf
  // first) and labels.
  void AddSample(const std::vector<uint64_t>& locations, std::span<const int64_t> values,
                 const std::vector<Label>& labels);

  size_t samples() const { return samples_.size(); }
  size_t locations() const { return locations_.size(); }
  size_t functions() const { return functions_.size(); }
  size_t mappings() const { return mappings_.size(); }

  // The serialized Profile message.
  std::string Serialize() const;

 private:
  struct ValueType {
    int64_t type = 0, unit = 0;
  };
  struct Mapping {
    uint64_t start = 0, limit = 0, file_offset = 0;
    int64_t file = 0, build_id = 0;
  };
  struct FunctionKey {
    int64_t name = 0, system_name = 0, file = 0;
    auto operator<=>(const FunctionKey&) const = default;
  };
  struct LocationKey {
    uint64_t mapping_id = 0, address = 0;
    std::vector<Line> lines;
    bool operator<(const LocationKey& other) const {
      return std::tie(mapping_id, address, lines) <
             std::tie(other.mapping_id, other.address, other.lines);
    }
  };
  struct Sample {
    std::vector<uint64_t> locations;
    std::vector<int64_t> values;
    std::vector<Label> labels;
  };

  // Looked up by string_view without building a string (most lookups find one).
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
  };
  std::vector<std::string> strings_;
  std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>> string_index_;
  std::vector<ValueType> sample_types_;
  ValueType period_type_;
  int64_t period_ = 0;
  int64_t default_sample_type_ = 0;
  int64_t time_nanos_ = 0, duration_nanos_ = 0;
  std::vector<int64_t> comments_;
  std::vector<Mapping> mappings_;       // id = index + 1
  std::vector<FunctionKey> functions_;  // id = index + 1
  std::map<FunctionKey, uint64_t> function_ids_;
  std::vector<const LocationKey*> locations_;  // id = index + 1
  std::map<LocationKey, uint64_t> location_ids_;
  std::vector<Sample> samples_;
  std::map<std::pair<std::vector<uint64_t>, std::vector<Label>>, size_t> sample_index_;
};

}  // namespace gpuperf
