// The user stacks of on-CPU samples unwound with each module's `.eh_frame`, as perf
// --call-graph dwarf does: the BPF program copies the interrupted registers and the top of
// the user stack (gp_user_stack_copy), and this walks the copy with the injection library's
// table walk (src/inject/stack/table_walk.h), reading the copy where the stack was.
//
// Tables are built from the files on disk, lazily: a module's when a walk first needs it
// (a PC in it), from its PT_GNU_EH_FRAME header and `.eh_frame` read out of the file, at the
// file's own addresses; kept per file (path and build id), and shared by every process
// that maps it, wherever: each process's walk subtracts the module's load bias before it
// looks a PC up. (Per load address, every process of a program under ASLR would build
// libc's table again: ~1 ms and a few hundred KB each, libtorch's ~0.3 s and tens of MB.)
// The vDSO is in no file: its image is the same in every process of this kernel, so ours
// is read (getauxval).
//
// Tables are built on a thread of their own, never by the walk that needs them: the
// caller is the draining thread, and libtorch's tables take tenths of a second to build
// (0.6-0.75 s for a PyTorch process's libraries on the H100 host), during which the ring
// buffer filled and samples were lost (640 at 99 Hz in the PyTorch inference check). A walk
// that reaches a module whose table is not built yet stops (kPending) after asking for it.
//
// A walk that cannot finish (a module without a table or with its table still being built,
// a frame its rules cannot express, code made at run time) says so; the caller then keeps
// the frame-pointer stack.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ebpf/cpu_profile_abi.h"
#include "ebpf/proc_maps.h"
#include "inject/stack/table_unwinder.h"
#include "inject/stack/table_walk.h"
#include "inject/stack/unwind_table.h"

namespace gpuperf::ebpf {

// Builds the table of the ELF file at `path`, at the file's own virtual addresses (load
// bias 0). Always returns a table; its status says whether it has rows. `image`, when
// given, is the file's bytes already in memory (the vDSO).
std::unique_ptr<ModuleUnwindTable> BuildFileUnwindTable(const std::string& path,
                                                        const uint8_t* image = nullptr,
                                                        size_t image_size = 0);

// A module of one process: where it is mapped, its load bias, and its file's table.
struct PlacedModule {
  uint64_t start = 0, end = 0, bias = 0;
  const ModuleUnwindTable* table = nullptr;  // never null (a pending one until built)
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
    return RuntimeRules::FindInTable(*m->table, lookup - m->bias, rule, stop);
  }
};

class SampleUnwinder {
 public:
  SampleUnwinder() { pending_.status = ModuleTableStatus::kPending; }
  ~SampleUnwinder();
  SampleUnwinder(const SampleUnwinder&) = delete;
  SampleUnwinder& operator=(const SampleUnwinder&) = delete;

  // A module process `pid` maps (from its /proc/PID/maps); replaces any it overlaps.
  void AddModule(uint32_t pid, const MappedModule& module);
  // Forgets a process's modules (it ran a new program).
  void ForgetProcess(uint32_t pid);

  // Walks the sample's copy of its user stack, writing the PCs, innermost (the interrupted
  // instruction) first. A result that is complete() or stopped at kEndOfCopy is the stack;
  // any other stop leaves it unfinished (kPending: a table it needs is being built). Never
  // reads outside the copy, never waits.
  TableWalkResult Unwind(uint32_t pid, const gp_user_stack_copy& copy, uint64_t* pcs,
                         int max_depth);

  // Waits until every table asked for is built (tests, and nothing else).
  void WaitForTables();

  uint64_t tables_built() const { return tables_built_.load(std::memory_order_relaxed); }
  uint64_t build_ns() const { return build_ns_.load(std::memory_order_relaxed); }

 private:
  using FileKey = std::pair<std::string, std::string>;  // path, build id
  // The file's table, or nullptr while it is being built (asked for at the first call).
  const ModuleUnwindTable* TableFor(const MappedModule& module);
  void BuildLoop();
  struct Process;
  // Asks for the tables of the modules the words of a stack copy point into.
  void AskForCallers(Process& p, const uint8_t* bytes, size_t size);

  struct Process {
    std::vector<PlacedModule> placed;   // what the walk reads: pending tables until needed
    std::vector<MappedModule> modules;  // parallel to placed
  };
  // The caller's thread only.
  std::unordered_map<uint32_t, Process> processes_;
  std::map<FileKey, std::unique_ptr<ModuleUnwindTable>> tables_;  // by file: every process
  std::set<FileKey> asked_;
  ModuleUnwindTable pending_;  // status kPending: shared by every module not built yet

  // Between the caller and the builder thread (started at the first request).
  std::mutex mutex_;
  std::condition_variable wake_;  // the builder: a file to build, or stop
  std::condition_variable idle_;  // WaitForTables: nothing queued or being built
  std::deque<FileKey> queue_;
  std::vector<std::pair<FileKey, std::unique_ptr<ModuleUnwindTable>>> built_;
  bool building_ = false;
  bool stop_ = false;
  std::thread builder_;
  std::atomic<uint64_t> tables_built_{0};
  std::atomic<uint64_t> build_ns_{0};
};

}  // namespace gpuperf::ebpf
