// What a reading of a trace delivered, as text: for tests that compare two readings (with
// one thread and with several, alone and shared) call for call.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

#include "gpuperf/trace_reader.h"

namespace gpuperf::testing {

// Every call a sink receives, one line each, with every field of every record (string and
// stack ids as numbers).
class CallLog final : public RecordSink {
 public:
  void OnString(StringId id, std::string_view text) override;
  void OnStack(const StackRecord& stack) override;
  void OnSymbol(const SymbolRecord& symbol) override;
#define GP_CALL_LOG_ON(Type, name, plural, number) \
  void On##Type(std::span<const Type##Record> records) override;
  GPUPERF_FIXED_RECORD_TYPES(GP_CALL_LOG_ON)
#undef GP_CALL_LOG_ON

  std::string text() const {
    return out_.str();
  }

 private:
  std::ostringstream out_;
};

// Every counter and warning of a ReadReport.
std::string DescribeReadReport(const ReadReport& report);

// A trace of `kernels` launches in many small chunks (7 records each): API calls, launch
// links and kernels interleaved with the strings they name, defined as they are first
// used; five stacks; a process record at the end. Fails the test on a write error.
void WriteManyChunks(const std::string& path, uint32_t pid, int kernels);

}  // namespace gpuperf::testing
