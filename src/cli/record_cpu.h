// `gpuperf record --cpu/--off-cpu/--system`: the eBPF CPU profiler (src/ebpf) around the
// recorded command, in the `gpuperf record` process. It starts before the command runs,
// follows its process tree (or every process, --system) and writes
// cpu.<gpuperf's pid>.gpt into the recording's directory (docs/cpu-profiling.md).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "cli/record_options.h"

namespace gpuperf::cli {

class CpuRecording {
 public:
  // Null when CPU profiling was not asked for, or cannot run here (no privileges, a
  // gpuperf built without eBPF, a kernel without BTF): then one line said why and what to
  // do, and the GPU recording goes on.
  static std::unique_ptr<CpuRecording> Start(const RecordOptions& options, const std::string& dir);
  virtual ~CpuRecording() = default;
  // Follows `pid` and the processes it starts from now on.
  virtual void Follow(pid_t pid) = 0;
  // Starts the thread that drains the kernel's buffer: after any fork, so that the child
  // of a single-threaded parent may still allocate before it execs.
  virtual void Run() = 0;
  // Stops sampling and writes the file (one summary line unless quiet); the collector's
  // counters are filed under `stats_pid`. False when nothing was written.
  virtual bool Finish(uint32_t stats_pid) = 0;
  virtual std::string file_name() const = 0;
};

bool WantsCpuRecording(const RecordOptions& options);

}  // namespace gpuperf::cli
