#include "support/test_trace.h"

#include "gpuperf/python_frame_word.h"
#include "gpuperf/trace_writer.h"

namespace gpuperf::testing {

TestTrace::TestTrace() {
  trace_.strings.assign(1, std::string());
  trace_.stacks.assign(1, StackRecord());
}

StringId TestTrace::Str(std::string_view text) {
  if (text.empty()) return 0;
  auto it = string_ids_.find(text);
  if (it != string_ids_.end()) return it->second;
  const auto id = static_cast<StringId>(trace_.strings.size());
  trace_.strings.emplace_back(text);
  string_ids_.emplace(std::string(text), id);
  return id;
}

void TestTrace::Process(uint32_t pid, std::string_view command) {
  ProcessRecord process;
  process.pid = pid;
  process.command = Str(command);
  // Test processes end cleanly unless a test says otherwise: an end of 0 is data loss.
  process.end_ns = 1'000'000'000;
  trace_.processes.push_back(process);
}

void TestTrace::Thread(uint32_t pid, uint32_t tid, std::string_view name) {
  trace_.threads.push_back(ThreadRecord{pid, tid, Str(name)});
}

uint64_t TestTrace::PcFor(uint32_t pid, const std::string& frame) {
  auto key = std::make_pair(pid, frame);
  auto it = pcs_.find(key);
  if (it != pcs_.end()) return it->second;
  if (next_pc_.find(pid) == next_pc_.end()) {
    next_pc_[pid] = kModuleBase + 0x1000;
    trace_.modules.push_back(
        ModuleRecord{pid, Str("/opt/app/libapp.so"), 0, kModuleBase, kModuleBase, 0x10000000});
  }
  uint64_t pc = next_pc_[pid];
  next_pc_[pid] += 0x40;
  if (frame.starts_with("0x")) {
    pc = kModuleBase + std::stoull(frame, nullptr, 16);
  } else {
    const size_t bang = frame.find('!');
    // "[kernel]!schedule": a kernel frame of a CPU sample, named as the recorder names them.
    const std::string module = bang == std::string::npos ? "/opt/app/libapp.so"
                               : frame[0] == '['         ? frame.substr(0, bang)
                                                         : "/usr/lib/" + frame.substr(0, bang);
    const std::string function = bang == std::string::npos ? frame : frame.substr(bang + 1);
    SymbolRecord symbol;
    symbol.pid = pid;
    symbol.pc = pc;
    symbol.frames.push_back({Str(function), Str("app.cc"), 10, Str(module), pc});
    trace_.symbols.push_back(symbol);
  }
  pcs_.emplace(key, pc);
  return pc;
}

StackId TestTrace::Stack(uint32_t pid, const std::vector<std::string>& frames_outermost_first) {
  StackRecord stack;
  stack.pid = pid;
  stack.id = static_cast<StackId>(trace_.stacks.size());
  for (auto it = frames_outermost_first.rbegin(); it != frames_outermost_first.rend(); ++it) {
    stack.pcs.push_back(PcFor(pid, *it));
  }
  trace_.stacks.push_back(stack);
  return stack.id;
}

void TestTrace::PythonCode(uint32_t pid, uint32_t code_id, std::string_view qualname,
                           std::string_view file, int32_t first_line) {
  PythonCodeRecord code;
  code.pid = pid;
  code.code_id = code_id;
  code.name = Str(qualname);
  code.file = Str(file);
  code.first_line = first_line;
  code.python_version = 0x030a0000;
  code.line_format = 1;  // CPython 3.10: (bytes covered, line delta) pairs
  for (int unit = 0; unit < 32; ++unit) code.line_table += std::string{'\x04', '\x01'};
  code.code_units = 64;
  trace_.python_codes.push_back(code);
}

void TestTrace::AddPythonFrame(StackId stack, uint32_t code_id, uint32_t unit, bool entry) {
  trace_.stacks[stack].pcs.push_back(MakePythonFrameWord(code_id, unit, entry));
}

void TestTrace::Link(uint32_t pid, uint32_t tid, uint32_t correlation_id, StackId stack,
                     std::string_view api, uint64_t timestamp_ns) {
  trace_.launch_links.push_back(
      LaunchLinkRecord{pid, tid, correlation_id, stack, Str(api), timestamp_ns});
}

KernelRecord& TestTrace::Kernel(uint32_t pid, std::string_view name, uint32_t correlation_id,
                                uint64_t start_ns, uint64_t end_ns, uint32_t device,
                                uint32_t stream) {
  KernelRecord kernel;
  kernel.pid = pid;
  kernel.name = Str(name);
  kernel.correlation_id = correlation_id;
  kernel.start_ns = start_ns;
  kernel.end_ns = end_ns;
  kernel.device_id = device;
  kernel.stream_id = stream;
  trace_.kernels.push_back(kernel);
  return trace_.kernels.back();
}

MemcpyRecord& TestTrace::Memcpy(uint32_t pid, MemcpyKind kind, uint32_t correlation_id,
                                uint64_t start_ns, uint64_t end_ns, uint32_t device,
                                uint32_t stream) {
  MemcpyRecord copy;
  copy.pid = pid;
  copy.kind = kind;
  copy.correlation_id = correlation_id;
  copy.start_ns = start_ns;
  copy.end_ns = end_ns;
  copy.device_id = device;
  copy.stream_id = stream;
  copy.bytes = 4096;
  trace_.memcpys.push_back(copy);
  return trace_.memcpys.back();
}

MemsetRecord& TestTrace::Memset(uint32_t pid, uint32_t correlation_id, uint64_t start_ns,
                                uint64_t end_ns, uint32_t device, uint32_t stream) {
  MemsetRecord set;
  set.pid = pid;
  set.correlation_id = correlation_id;
  set.start_ns = start_ns;
  set.end_ns = end_ns;
  set.device_id = device;
  set.stream_id = stream;
  set.bytes = 1024;
  trace_.memsets.push_back(set);
  return trace_.memsets.back();
}

DeviceRecord H100Device() {
  DeviceRecord d;
  d.compute_major = 9;
  d.compute_minor = 0;
  d.sm_count = 132;
  d.warp_size = 32;
  d.max_threads_per_block = 1024;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.max_registers_per_block = 65536;
  d.max_registers_per_sm = 65536;
  d.max_shared_per_block = 48 * 1024;
  d.max_shared_per_sm = 228 * 1024;
  return d;
}

Status WriteTrace(const Trace& trace, const std::string& path) {
  GP_ASSIGN_OR_RETURN(std::unique_ptr<TraceWriter> writer, TraceWriter::Create(path));
  for (size_t id = 1; id < trace.strings.size(); ++id) writer->InternString(trace.strings[id]);
  for (size_t id = 1; id < trace.stacks.size(); ++id) writer->AddStack(trace.stacks[id]);
  for (const SymbolRecord& symbol : trace.symbols) writer->AddSymbol(symbol);
  for (const PythonCodeRecord& code : trace.python_codes) writer->AddPythonCode(code);
  for (const PcSampleRecord& sample : trace.pc_samples) writer->AddPcSample(sample);
  for (const CubinRecord& cubin : trace.cubins) writer->AddCubin(cubin);
  for (const SassLineRecord& line : trace.sass_lines) writer->AddSassLine(line);
#define GPUPERF_WRITE_ALL(Type, name, plural, number) \
  for (const Type##Record& record : trace.plural) writer->Add(record);
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_WRITE_ALL)
#undef GPUPERF_WRITE_ALL
  return writer->Close();
}

}  // namespace gpuperf::testing
