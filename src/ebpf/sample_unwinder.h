// The user stacks of on-CPU samples unwound with each module's `.eh_frame`, as perf
// --call-graph dwarf does: the BPF program copies the interrupted registers and the top of
// the user stack (gp_user_stack_copy), and this walks the copy with the injection library's
// table walk (src/unwind/table_walk.h), reading the copy where the stack was.
//
// Rules come from the files on disk, lazily (file_unwind_rules.h): a file is indexed (mapped,
// its program headers and `.eh_frame_hdr` read) the first time a walk needs a PC in it, and
// each FDE compiled the first time a lookup lands in it, at the file's own addresses; kept
// per file (path and build id), and shared by every process that maps it, wherever: each
// process's walk subtracts the module's load bias before it looks a PC up. (Per load
// address, every process of a program under ASLR would index and compile libc again.) The
// vDSO is in no file: its image is the same in every process of this kernel, so ours is
// read (getauxval).
//
// Everything happens on the caller's thread (the draining one), inside the walk that needs
// it: there is no builder thread any more. It existed because whole tables took tenths of
// a second (0.6-1.1 s for a PyTorch process's libraries on the H100 host), during which
// the ring buffer filled; indexing a file takes microseconds and a lookup that compiles its
// FDE about one (bench/sample_unwinder_bench, on the 2-core development VM: 8-35 us to
// index libc or libLLVM, 0.5-2.5 us per new address, 20-40 ns per address seen before), so
// a walk never stops for want of rules, and no stack keeps its frame-pointer walk for that.
// The few files whose header has no searchable table are compiled whole, inline too: GNU
// ld and lld write that table (none of the 1,553 files with PT_GNU_EH_FRAME on the VM
// lacks it), and a thread with its queue, pending state and retries for them alone would
// cost more than it saves.
//
// A walk that cannot finish (a module without rules, a frame its rules cannot express,
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
#include "ebpf/file_unwind_rules.h"
#include "ebpf/proc_maps.h"
#include "unwind/table_unwinder.h"
#include "unwind/table_walk.h"

namespace gpuperf::ebpf {

// A module of one process: where it is mapped, its load bias, and its file's rules.
struct PlacedModule {
  uint64_t start = 0, end = 0, bias = 0;
  FileUnwindRules* rules = nullptr;  // never null (indexed at its first lookup)
};

// The rules of one process's modules for the table walk (table_walk.h RuntimeRules): the
// module that holds an address, then its file's rule at the address minus the bias.
struct PlacedRules {
  const std::vector<PlacedModule>& modules;  // sorted by start, not overlapping
  const PlacedModule* hint = nullptr;        // the module of the frame before

  const PlacedModule* Module(uint64_t address) const;
  bool Find(uint64_t lookup, UnwindRule* rule, TableWalkStop* stop) {
    const PlacedModule* m = hint;
    if (m == nullptr || lookup - m->start >= m->end - m->start) {
      m = Module(lookup);
      hint = m;
    }
    if (m == nullptr) {
      *stop = TableWalkStop::kUnknownModule;
      return false;
    }
    return m->rules->Find(lookup - m->bias, rule, stop);
  }
};

class SampleUnwinder {
 public:
  SampleUnwinder() = default;
  SampleUnwinder(const SampleUnwinder&) = delete;
  SampleUnwinder& operator=(const SampleUnwinder&) = delete;

  // A module process `pid` maps (from its /proc/PID/maps); replaces any it overlaps.
  void AddModule(uint32_t pid, const MappedModule& module);
  // Forgets a process's modules (it ran a new program).
  void ForgetProcess(uint32_t pid);

  // Walks the sample's copy of its user stack, writing the PCs, innermost (the interrupted
  // instruction) first. A result that is complete() or stopped at kEndOfCopy is the stack;
  // any other stop leaves it unfinished. Never reads outside the copy; indexes the files
  // and compiles the FDEs it needs on the way.
  TableWalkResult Unwind(uint32_t pid, const gp_user_stack_copy& copy, uint64_t* pcs,
                         int max_depth);

  // Files indexed (or compiled whole), FDEs compiled, and the time both and the lookups
  // not cached took (ns): part of the time spent in Unwind.
  uint64_t tables_built() const;
  uint64_t fdes_compiled() const;
  uint64_t build_ns() const;

 private:
  using FileKey = std::pair<std::string, std::string>;  // path, build id
  // The file's rules, made (not indexed yet) at the first module that maps it.
  FileUnwindRules* RulesFor(const MappedModule& module);

  struct Process {
    std::vector<PlacedModule> placed;
  };
  std::unordered_map<uint32_t, Process> processes_;
  std::map<FileKey, std::unique_ptr<FileUnwindRules>> files_;  // every process's
};

}  // namespace gpuperf::ebpf
