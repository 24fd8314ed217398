// Builds small in-memory traces for analysis and exporter tests: strings are interned,
// stacks are given as readable frame names and get PCs, a module and symbols of their
// own, so tests read like the situation they describe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuperf/status.h"
#include "gpuperf/trace.h"

namespace gpuperf::testing {

class TestTrace {
 public:
  TestTrace();

  StringId Str(std::string_view text);

  // A process record (and the fake module its symbolized frames live in).
  void Process(uint32_t pid, std::string_view command);
  void Thread(uint32_t pid, uint32_t tid, std::string_view name);

  // A stack of symbolized frames, outermost first. Names starting with "0x" stay
  // unsymbolized (their PC is inside the process's module, so they resolve to
  // "libapp.so+0x..."). "module!function" puts the function in that module (e.g.
  // "libpython3.11.so!_PyEval_EvalFrameDefault"; "[kernel]!schedule" is a kernel frame).
  // Returns the new stack id.
  StackId Stack(uint32_t pid, const std::vector<std::string>& frames_outermost_first);

  // A Python code object of process `pid`: lines from `first_line` + 1 on, one line per
  // two code units (a CPython 3.10 line table).
  void PythonCode(uint32_t pid, uint32_t code_id, std::string_view qualname, std::string_view file,
                  int32_t first_line);
  // Appends a Python frame (the code's `unit`-th instruction) to a stack: call innermost
  // first, after its native frames.
  void AddPythonFrame(StackId stack, uint32_t code_id, uint32_t unit, bool entry);

  void Link(uint32_t pid, uint32_t tid, uint32_t correlation_id, StackId stack,
            std::string_view api, uint64_t timestamp_ns = 0);
  KernelRecord& Kernel(uint32_t pid, std::string_view name, uint32_t correlation_id,
                       uint64_t start_ns, uint64_t end_ns, uint32_t device = 0,
                       uint32_t stream = 7);
  MemcpyRecord& Memcpy(uint32_t pid, MemcpyKind kind, uint32_t correlation_id, uint64_t start_ns,
                       uint64_t end_ns, uint32_t device = 0, uint32_t stream = 7);
  MemsetRecord& Memset(uint32_t pid, uint32_t correlation_id, uint64_t start_ns, uint64_t end_ns,
                       uint32_t device = 0, uint32_t stream = 7);

  Trace& trace() { return trace_; }
  const Trace& trace() const { return trace_; }

 private:
  static constexpr uint64_t kModuleBase = 0x400000;
  uint64_t PcFor(uint32_t pid, const std::string& frame);

  Trace trace_;
  std::map<std::string, StringId, std::less<>> string_ids_;
  std::map<std::pair<uint32_t, std::string>, uint64_t> pcs_;
  std::map<uint32_t, uint64_t> next_pc_;
};

// An H100 SXM's limits as the CUDA runtime reports them (what occupancy needs).
DeviceRecord H100Device();

// Writes every record of `trace` to a trace file at `path`, as a recording would have
// (strings keep their ids: the trace's strings must be unique).
Status WriteTrace(const Trace& trace, const std::string& path);

}  // namespace gpuperf::testing
