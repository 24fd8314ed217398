// The user stacks of on-CPU samples unwound with each module's `.eh_frame`, as perf
// --call-graph dwarf does: the BPF program copies the interrupted registers and the top of
// the user stack (gp_user_stack_copy), and this walks the copy with the injection library's
// table walk (src/inject/stack/table_walk.h), reading the copy where the stack was.
//
// Tables are built from the files on disk, lazily: a module's when a walk first needs it
// (a PC in it), from its PT_GNU_EH_FRAME header and `.eh_frame` read out of the file and
// placed at the module's load address; kept per (path, load bias), so the processes of one
// program (forks, non-PIE executables) share them. The vDSO is in no file: its image is
// the same in every process of this kernel, so ours is read (getauxval) and placed at the
// target's vDSO address.
//
// A walk that cannot finish (a module without a table, a frame its rules cannot express,
// code made at run time) says so; the caller then keeps the frame-pointer stack.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ebpf/cpu_profile_abi.h"
#include "ebpf/proc_maps.h"
#include "inject/stack/table_unwinder.h"
#include "inject/stack/unwind_table.h"

namespace gpuperf::ebpf {

// Builds the table of the ELF file at `path` mapped with `load_bias` over [start, end).
// Always returns a table; its status says whether it has rows. `image`, when given, is the
// file's bytes already in memory (the vDSO).
std::unique_ptr<ModuleUnwindTable> BuildFileUnwindTable(const std::string& path, uint64_t load_bias,
                                                        uint64_t start, uint64_t end,
                                                        const uint8_t* image = nullptr,
                                                        size_t image_size = 0);

class SampleUnwinder {
 public:
  SampleUnwinder() { pending_.status = ModuleTableStatus::kPending; }

  // A module process `pid` maps (from its /proc/PID/maps); replaces any it overlaps.
  void AddModule(uint32_t pid, const MappedModule& module);
  // Forgets a process's modules (it ran a new program).
  void ForgetProcess(uint32_t pid);

  // Walks the sample's copy of its user stack, writing the PCs, innermost (the interrupted
  // instruction) first. A result that is complete() or stopped at kEndOfCopy is the stack;
  // any other stop leaves it unfinished. Never reads outside the copy.
  TableWalkResult Unwind(uint32_t pid, const gp_user_stack_copy& copy, uint64_t* pcs,
                         int max_depth);

  uint64_t tables_built() const { return tables_built_; }
  uint64_t build_ns() const { return build_ns_; }

 private:
  const ModuleUnwindTable* TableFor(const MappedModule& module);

  struct Process {
    UnwindSnapshot snapshot;            // what the walk reads: pending tables until needed
    std::vector<MappedModule> modules;  // parallel to snapshot.modules
  };
  std::unordered_map<uint32_t, Process> processes_;
  std::map<std::pair<std::string, uint64_t>, std::unique_ptr<ModuleUnwindTable>> tables_;
  ModuleUnwindTable pending_;  // status kPending: shared by every module not built yet
  uint64_t tables_built_ = 0;
  uint64_t build_ns_ = 0;
};

}  // namespace gpuperf::ebpf
