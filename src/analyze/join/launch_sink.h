// A RecordSink for the outputs that show GPU work under its launch stacks (flame graph,
// pprof): it feeds the trace's launch links, stacks and GPU records into a Correlator and
// keeps what naming the stacks needs afterwards, plus the recorders' loss counters.
// Outputs that need more (API calls, clocks) derive from it.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/join/correlation.h"
#include "analyze/join/data_loss.h"
#include "gpuperf/records.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

// What names a trace's launch stacks (analyze/symbols/symbol_table.h resolves them).
struct StackNames {
  std::vector<std::string> strings;  // indexed by StringId
  std::vector<StackRecord> stacks;   // indexed by StackId
  std::vector<SymbolRecord> symbols;
  std::vector<PythonCodeRecord> python_codes;
  std::vector<ModuleRecord> modules;
  std::vector<ThreadRecord> threads;
};

class LaunchSink : public RecordSink, public StackNames {
 public:
  explicit LaunchSink(Correlator& correlator);

  void OnString(StringId id, std::string_view text) override;
  void OnStack(const StackRecord& stack) override;
  void OnSymbol(const SymbolRecord& symbol) override { symbols.push_back(symbol); }
  void OnPythonCode(const PythonCodeRecord& code) override { python_codes.push_back(code); }
  void OnModule(std::span<const ModuleRecord> records) override {
    modules.insert(modules.end(), records.begin(), records.end());
  }
  void OnProcess(std::span<const ProcessRecord> records) override;
  void OnStat(std::span<const StatRecord> records) override { loss.AddStats(records); }
  void OnThread(std::span<const ThreadRecord> records) override {
    threads.insert(threads.end(), records.begin(), records.end());
  }
  void OnLaunchLink(std::span<const LaunchLinkRecord> records) override {
    correlator_.AddLinks(records);
  }
  void OnKernel(std::span<const KernelRecord> records) override { correlator_.AddKernels(records); }
  void OnMemcpy(std::span<const MemcpyRecord> records) override { correlator_.AddMemcpys(records); }
  void OnMemset(std::span<const MemsetRecord> records) override { correlator_.AddMemsets(records); }

  std::vector<ProcessRecord> processes;
  RecordingLossCollector loss;

 protected:
  Correlator& correlator_;
};

}  // namespace gpuperf
