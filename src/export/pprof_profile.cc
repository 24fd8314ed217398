#include "export/pprof_profile.h"

#include "export/protobuf_writer.h"

namespace gpuperf {
namespace {

// Field numbers of profile.proto.
enum ProfileField : uint32_t {
  kSampleType = 1,
  kSample = 2,
  kMapping = 3,
  kLocation = 4,
  kFunction = 5,
  kStringTable = 6,
  kTimeNanos = 9,
  kDurationNanos = 10,
  kPeriodType = 11,
  kPeriod = 12,
  kComment = 13,
  kDefaultSampleType = 14,
};
enum ValueTypeField : uint32_t { kValueTypeType = 1, kValueTypeUnit = 2 };
enum SampleField : uint32_t { kSampleLocationId = 1, kSampleValue = 2, kSampleLabel = 3 };
enum LabelField : uint32_t { kLabelKey = 1, kLabelStr = 2 };
enum MappingField : uint32_t {
  kMappingId = 1,
  kMappingMemoryStart = 2,
  kMappingMemoryLimit = 3,
  kMappingFileOffset = 4,
  kMappingFilename = 5,
  kMappingBuildId = 6,
  kMappingHasFunctions = 7,
  kMappingHasFilenames = 8,
  kMappingHasLineNumbers = 9,
  kMappingHasInlineFrames = 10,
};
enum LocationField : uint32_t {
  kLocationId = 1,
  kLocationMappingId = 2,
  kLocationAddress = 3,
  kLocationLine = 4,
};
enum LineField : uint32_t { kLineFunctionId = 1, kLineLine = 2 };
enum FunctionField : uint32_t {
  kFunctionId = 1,
  kFunctionName = 2,
  kFunctionSystemName = 3,
  kFunctionFilename = 4,
};

// Varints of zero are left out, as a proto3 writer does: absent and zero read the same.
void NonZero(ProtoWriter& w, uint32_t field, uint64_t value) {
  if (value != 0) w.Varint(field, value);
}

}  // namespace

PprofProfileBuilder::PprofProfileBuilder() {
  strings_.emplace_back();  // the format requires string_table[0] == ""
  string_index_.emplace(std::string(), 0);
}

int64_t PprofProfileBuilder::Str(std::string_view text) {
  if (auto it = string_index_.find(text); it != string_index_.end()) return it->second;
  const auto index = static_cast<int64_t>(strings_.size());
  string_index_.emplace(std::string(text), index);
  strings_.emplace_back(text);
  return index;
}

void PprofProfileBuilder::AddSampleType(std::string_view type, std::string_view unit) {
  sample_types_.push_back({Str(type), Str(unit)});
}

void PprofProfileBuilder::SetPeriod(std::string_view type, std::string_view unit, int64_t period) {
  period_type_ = {Str(type), Str(unit)};
  period_ = period;
}

uint64_t PprofProfileBuilder::AddMapping(uint64_t start, uint64_t limit, uint64_t file_offset,
                                         std::string_view file, std::string_view build_id) {
  mappings_.push_back({start, limit, file_offset, Str(file), Str(build_id)});
  return mappings_.size();
}

uint64_t PprofProfileBuilder::Function(std::string_view name, std::string_view system_name,
                                       std::string_view file) {
  FunctionKey key{Str(name), Str(system_name), Str(file)};
  auto [it, inserted] = function_ids_.emplace(key, functions_.size() + 1);
  if (inserted) functions_.push_back(key);
  return it->second;
}

uint64_t PprofProfileBuilder::Location(uint64_t mapping_id, uint64_t address,
                                       std::span<const Line> lines) {
  LocationKey key{mapping_id, address, std::vector<Line>(lines.begin(), lines.end())};
  auto [it, inserted] = location_ids_.emplace(std::move(key), locations_.size() + 1);
  if (inserted) locations_.push_back(&it->first);  // map nodes do not move
  return it->second;
}

void PprofProfileBuilder::AddSample(const std::vector<uint64_t>& locations,
                                    std::span<const int64_t> values,
                                    const std::vector<Label>& labels) {
  auto [it, inserted] = sample_index_.emplace(std::make_pair(locations, labels), samples_.size());
  if (inserted) {
    samples_.push_back({locations, std::vector<int64_t>(values.size(), 0), labels});
  }
  Sample& sample = samples_[it->second];
  for (size_t i = 0; i < values.size() && i < sample.values.size(); ++i) {
    sample.values[i] += values[i];
  }
}

std::string PprofProfileBuilder::Serialize() const {
  std::string out;
  ProtoWriter w(out);
  auto value_type = [&w](uint32_t field, const ValueType& v) {
    auto nested = w.BeginNested(field);
    NonZero(w, kValueTypeType, v.type);
    NonZero(w, kValueTypeUnit, v.unit);
    w.EndNested(nested);
  };
  for (const ValueType& type : sample_types_) value_type(kSampleType, type);

  std::vector<uint64_t> words;
  for (const Sample& sample : samples_) {
    auto nested = w.BeginNested(kSample);
    w.PackedVarints(kSampleLocationId, sample.locations);
    words.assign(sample.values.begin(), sample.values.end());
    w.PackedVarints(kSampleValue, words);
    for (const Label& label : sample.labels) {
      auto l = w.BeginNested(kSampleLabel);
      NonZero(w, kLabelKey, label.first);
      NonZero(w, kLabelStr, label.second);
      w.EndNested(l);
    }
    w.EndNested(nested);
  }

  for (size_t i = 0; i < mappings_.size(); ++i) {
    const Mapping& m = mappings_[i];
    auto nested = w.BeginNested(kMapping);
    w.Varint(kMappingId, i + 1);
    NonZero(w, kMappingMemoryStart, m.start);
    NonZero(w, kMappingMemoryLimit, m.limit);
    NonZero(w, kMappingFileOffset, m.file_offset);
    NonZero(w, kMappingFilename, m.file);
    NonZero(w, kMappingBuildId, m.build_id);
    // Every location comes symbolized (a name for each PC, even an unresolved one):
    // readers must not symbolize again with whatever binaries they find.
    w.Bool(kMappingHasFunctions, true);
    w.Bool(kMappingHasFilenames, true);
    w.Bool(kMappingHasLineNumbers, true);
    w.Bool(kMappingHasInlineFrames, true);
    w.EndNested(nested);
  }

  for (size_t i = 0; i < locations_.size(); ++i) {
    const LocationKey& location = *locations_[i];
    auto nested = w.BeginNested(kLocation);
    w.Varint(kLocationId, i + 1);
    NonZero(w, kLocationMappingId, location.mapping_id);
    NonZero(w, kLocationAddress, location.address);
    for (const Line& line : location.lines) {
      auto l = w.BeginNested(kLocationLine);
      w.Varint(kLineFunctionId, line.function_id);
      if (line.line != 0) w.Int(kLineLine, line.line);
      w.EndNested(l);
    }
    w.EndNested(nested);
  }

  for (size_t i = 0; i < functions_.size(); ++i) {
    const FunctionKey& f = functions_[i];
    auto nested = w.BeginNested(kFunction);
    w.Varint(kFunctionId, i + 1);
    NonZero(w, kFunctionName, f.name);
    NonZero(w, kFunctionSystemName, f.system_name);
    NonZero(w, kFunctionFilename, f.file);
    w.EndNested(nested);
  }

  for (const std::string& text : strings_) w.String(kStringTable, text);
  if (time_nanos_ != 0) w.Int(kTimeNanos, time_nanos_);
  if (duration_nanos_ != 0) w.Int(kDurationNanos, duration_nanos_);
  if (period_type_.type != 0) value_type(kPeriodType, period_type_);
  if (period_ != 0) w.Int(kPeriod, period_);
  words.assign(comments_.begin(), comments_.end());
  w.PackedVarints(kComment, words);
  NonZero(w, kDefaultSampleType, default_sample_type_);
  return out;
}

}  // namespace gpuperf
