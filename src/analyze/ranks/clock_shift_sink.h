// Puts every record of a multi-host trace on one clock as it streams: a RecordSink that
// adds each process's offset (ClockAlignment) to every timestamp of its records before
// passing them on. Timestamps are the fields named *_ns in the record schema, except
// CLOCK_REALTIME readings (ClockRecord::realtime_ns) and zeros (a time not known).
#pragma once

#include <span>
#include <vector>

#include "analyze/ranks/clock_alignment.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

class ClockShiftSink final : public RecordSink {
 public:
  ClockShiftSink(RecordSink& inner, const ClockAlignment& alignment)
      : inner_(inner), alignment_(alignment) {}

  void OnString(StringId id, std::string_view text) override { inner_.OnString(id, text); }
  void OnStack(const StackRecord& stack) override { inner_.OnStack(stack); }
  void OnSymbol(const SymbolRecord& symbol) override { inner_.OnSymbol(symbol); }
  void OnPythonCode(const PythonCodeRecord& code) override { inner_.OnPythonCode(code); }
  // PC sampling's records carry no time.
  void OnPcSample(const PcSampleRecord& sample) override { inner_.OnPcSample(sample); }
  void OnCubin(const CubinRecord& cubin) override { inner_.OnCubin(cubin); }
  void OnSassLine(const SassLineRecord& line) override { inner_.OnSassLine(line); }
#define GPUPERF_SHIFT_ON(Type, name, plural, number)              \
  void On##Type(std::span<const Type##Record> records) override { \
    inner_.On##Type(Shifted(records, plural##_));                 \
  }
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_SHIFT_ON)
#undef GPUPERF_SHIFT_ON

 private:
  template <class R>
  std::span<const R> Shifted(std::span<const R> records, std::vector<R>& scratch);

  RecordSink& inner_;
  const ClockAlignment& alignment_;
#define GPUPERF_SHIFT_SCRATCH(Type, name, plural, number) std::vector<Type##Record> plural##_;
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_SHIFT_SCRATCH)
#undef GPUPERF_SHIFT_SCRATCH
};

// Shifts the timestamps of one record by `offset_ns` (the rule above).
template <class R>
void ShiftRecordTimes(R& record, int64_t offset_ns);

// Reads FILE or DIR into `sink` with every process on the reference host's clock (the
// identity, and no extra cost, when the trace has one clock); only the chunks of
// `chunk_types` when given (ReadTraceChunks).
Status ReadTraceAligned(const std::string& path, const ClockAlignment& alignment, RecordSink& sink,
                        ReadReport* report, std::span<const uint16_t> chunk_types = {});
// The same with every reading option (ReadTraceWith).
Status ReadTraceAligned(const std::string& path, const ClockAlignment& alignment, RecordSink& sink,
                        ReadReport* report, const ReadOptions& options);

}  // namespace gpuperf
