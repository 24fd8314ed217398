#include <span>

#include "gpuperf/trace.h"

namespace gpuperf {
namespace {

class TraceBuilder final : public RecordSink {
 public:
  explicit TraceBuilder(Trace& trace) : trace_(trace) {
    trace_.strings.assign(1, std::string());
    trace_.stacks.assign(1, StackRecord());
  }
  void OnString(StringId id, std::string_view text) override {
    if (trace_.strings.size() <= id) trace_.strings.resize(id + 1);
    trace_.strings[id] = std::string(text);
  }
  void OnStack(const StackRecord& stack) override {
    if (trace_.stacks.size() <= stack.id) trace_.stacks.resize(stack.id + 1);
    trace_.stacks[stack.id] = stack;
  }
  void OnSymbol(const SymbolRecord& symbol) override { trace_.symbols.push_back(symbol); }
  void OnPythonCode(const PythonCodeRecord& code) override { trace_.python_codes.push_back(code); }
  void OnPcSample(const PcSampleRecord& sample) override { trace_.pc_samples.push_back(sample); }
  void OnCubin(const CubinRecord& cubin) override { trace_.cubins.push_back(cubin); }
  void OnSassLine(const SassLineRecord& line) override { trace_.sass_lines.push_back(line); }
#define GPUPERF_BUILDER_ON(Type, name, plural, number)                         \
  void On##Type(std::span<const Type##Record> records) override {              \
    trace_.plural.insert(trace_.plural.end(), records.begin(), records.end()); \
  }
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_BUILDER_ON)
#undef GPUPERF_BUILDER_ON

 private:
  Trace& trace_;
};

}  // namespace

Result<Trace> LoadTrace(const std::string& path) {
  Trace trace;
  TraceBuilder builder(trace);
  GP_RETURN_IF_ERROR(ReadTrace(path, builder, &trace.read_report));
  return trace;
}

void ReplayTrace(const Trace& trace, RecordSink& sink) {
  for (StringId id = 1; id < trace.strings.size(); ++id) sink.OnString(id, trace.strings[id]);
  for (size_t id = 1; id < trace.stacks.size(); ++id) sink.OnStack(trace.stacks[id]);
  for (const SymbolRecord& symbol : trace.symbols) sink.OnSymbol(symbol);
  for (const PythonCodeRecord& code : trace.python_codes) sink.OnPythonCode(code);
  for (const CubinRecord& cubin : trace.cubins) sink.OnCubin(cubin);
  for (const SassLineRecord& line : trace.sass_lines) sink.OnSassLine(line);
  for (const PcSampleRecord& sample : trace.pc_samples) sink.OnPcSample(sample);
#define GPUPERF_REPLAY(Type, name, plural, number) \
  if (!trace.plural.empty()) sink.On##Type(std::span<const Type##Record>(trace.plural));
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_REPLAY)
#undef GPUPERF_REPLAY
}

}  // namespace gpuperf
