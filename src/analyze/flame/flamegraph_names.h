// How the flame graph names its frames (analyze/flame/flamegraph.h): one interned frame per
// (name, kind), CPU frames from recorded stacks through the symbol table, GPU frames from
// activity names, context labels for processes and threads. Shared by the GPU side
// (flamegraph.cc) and the CPU side (flamegraph_cpu.cc) so both name a function alike.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyze/flame/flamegraph.h"
#include "analyze/join/correlation.h"
#include "analyze/symbols/symbol_table.h"
#include "base/demangle.h"

namespace gpuperf::flame {

// What the trace says about names; views into a loaded Trace or a streaming sink.
struct NameSources {
  const std::vector<std::string>& strings;
  const std::vector<StackRecord>& stacks;  // indexed by stack id
  SymbolTable& symbols;
  std::span<const ProcessRecord> processes;
  std::span<const ThreadRecord> threads;
  std::span<const RankRecord> ranks;

  std::string_view Str(StringId id) const {
    return id < strings.size() ? std::string_view(strings[id]) : std::string_view();
  }
};

// Folded stacks separate frames with ';' and end with " <weight>": keep names one line
// and free of separators. Names are in the display form of base/text_escape.h (control
// characters and bytes that are not UTF-8 as \xNN), which every output of a flame graph
// can show as it is.
std::string Sanitize(std::string_view name);

class GraphResolver {
 public:
  GraphResolver(const NameSources& names, const FlameGraphOptions& options, FlameGraph& graph)
      : names_(names), options_(options), graph_(graph) {}

  uint32_t Intern(std::string name, FlameFrameKind kind);

  // The frames of a recorded stack, outermost first. Kernel functions (CPU samples) get
  // a kind of their own.
  const std::vector<uint32_t>& CpuFrames(StackId stack_id, uint32_t tid);
  // Whether a frame of the stack is a CUDA call that waits for the GPU (cpu_time.h).
  bool NamesGpuWait(StackId stack_id, uint32_t tid);

  // The GPU frame: "[GPU<dev>] <name>"; `bare` receives the name alone (for --kernel).
  // `name` is the kernel's string id, or the MemcpyKind of a copy.
  uint32_t GpuFrame(GpuActivityKind kind, uint32_t name, uint32_t device, std::string* bare);

  std::string ProcessLabel(uint32_t pid) const;
  // `known`: the activity has a launching thread at all.
  std::string ThreadLabel(uint32_t pid, uint32_t tid, bool known) const;
  // --split-by rank: "[rank 1 (node3, GPU 1)]", the process's rank, host and the GPUs it
  // ran work on (NoteDevice each before asking, so GPU and CPU stacks share one root).
  void NoteDevice(uint32_t pid, uint32_t device) { devices_of_pid_[pid].insert(device); }
  std::string RankLabel(uint32_t pid) const;

 private:
  struct Resolved {
    std::vector<uint32_t> frames;
    bool gpu_wait = false;
  };
  const Resolved& Resolve(StackId stack_id, uint32_t tid);

  const NameSources& names_;
  const FlameGraphOptions& options_;
  FlameGraph& graph_;
  std::map<std::pair<std::string, FlameFrameKind>, uint32_t> index_;
  std::unordered_map<uint64_t, Resolved> cpu_frames_;  // (stack << 32 | tid)
  std::map<uint32_t, std::set<uint32_t>> devices_of_pid_;
  std::vector<Frame> frames_;
  DemangleCache demangle_;
};

// The graph's stacks by path: a path seen again adds to the stack it made.
class PathIndex {
 public:
  FlameStack& At(const std::vector<uint32_t>& path, FlameGraph& graph);

 private:
  std::map<std::vector<uint32_t>, size_t> index_;
};

}  // namespace gpuperf::flame
