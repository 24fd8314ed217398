#include "analyze/ranks/clock_shift_sink.h"

#include <string_view>

#include "format/record_schema.h"

namespace gpuperf {

namespace {

// Fields named *_ns that are not CLOCK_MONOTONIC times: wall-clock time, and durations.
bool IsMonotonicTime(std::string_view name) {
  return name.ends_with("_ns") && name != "realtime_ns" && name != "weight_ns" &&
         name != "blocked_ns";
}

}  // namespace

template <class R>
void ShiftRecordTimes(R& record, int64_t offset_ns) {
  format::ForEachField(record, [offset_ns](const char* field, auto& value, format::FieldEnc) {
    using FieldT = std::remove_cvref_t<decltype(value)>;
    if constexpr (std::is_same_v<FieldT, uint64_t>) {
      if (IsMonotonicTime(field) && value != 0) {
        value = static_cast<uint64_t>(static_cast<int64_t>(value) + offset_ns);
      }
    }
  });
}

template <class R>
std::span<const R> ClockShiftSink::Shifted(std::span<const R> records, std::vector<R>& scratch) {
  // Records come in runs of one process: look its offset up once per run.
  uint32_t pid = 0;
  int64_t offset = 0;
  bool known = false;
  auto offset_of = [&](uint32_t record_pid) {
    if (!known || record_pid != pid) {
      pid = record_pid;
      offset = alignment_.OffsetOf(pid);
      known = true;
    }
    return offset;
  };
  size_t first = 0;
  while (first < records.size() && offset_of(records[first].pid) == 0) ++first;
  if (first == records.size()) return records;
  scratch.assign(records.begin(), records.end());
  for (size_t i = first; i < scratch.size(); ++i) {
    if (const int64_t shift = offset_of(scratch[i].pid); shift != 0) {
      ShiftRecordTimes(scratch[i], shift);
    }
  }
  return scratch;
}

#define GPUPERF_SHIFT_INSTANCE(Type, name, plural, number)                      \
  template void ShiftRecordTimes<Type##Record>(Type##Record&, int64_t);         \
  template std::span<const Type##Record> ClockShiftSink::Shifted<Type##Record>( \
      std::span<const Type##Record>, std::vector<Type##Record>&);
GPUPERF_FIXED_RECORD_TYPES(GPUPERF_SHIFT_INSTANCE)
#undef GPUPERF_SHIFT_INSTANCE

Status ReadTraceAligned(const std::string& path, const ClockAlignment& alignment, RecordSink& sink,
                        ReadReport* report, std::span<const uint16_t> chunk_types) {
  ReadOptions options;
  options.chunk_types = chunk_types;
  return ReadTraceAligned(path, alignment, sink, report, options);
}

Status ReadTraceAligned(const std::string& path, const ClockAlignment& alignment, RecordSink& sink,
                        ReadReport* report, const ReadOptions& options) {
  if (alignment.identity()) return ReadTraceWith(path, options, sink, report);
  ClockShiftSink shifted(sink, alignment);
  return ReadTraceWith(path, options, shifted, report);
}

}  // namespace gpuperf
