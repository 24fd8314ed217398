// A whole trace in memory: what the analysis and the exporters work on when the trace
// fits. Code that must handle traces of any size streams with ReadTrace instead.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuperf/records.h"
#include "gpuperf/status.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

struct Trace {
  std::vector<std::string> strings;  // indexed by StringId; strings[0] is ""
  std::vector<StackRecord> stacks;   // indexed by StackId; stacks[0] is empty
  std::vector<SymbolRecord> symbols;
  std::vector<PythonCodeRecord> python_codes;
  std::vector<PcSampleRecord> pc_samples;
  std::vector<CubinRecord> cubins;
  std::vector<SassLineRecord> sass_lines;
#define GPUPERF_TRACE_VECTOR(Type, name, plural, number) std::vector<Type##Record> plural;
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_TRACE_VECTOR)
#undef GPUPERF_TRACE_VECTOR
  ReadReport read_report;

  std::string_view str(StringId id) const {
    return id < strings.size() ? std::string_view(strings[id]) : std::string_view();
  }
};

// Loads FILE or DIR (see ReadTrace) into memory.
Result<Trace> LoadTrace(const std::string& path);

// Adds each record of a Trace to a sink, type by type (strings and stacks first).
void ReplayTrace(const Trace& trace, RecordSink& sink);

}  // namespace gpuperf
