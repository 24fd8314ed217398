// The `.eh_frame` rules of one ELF file on disk, at the file's own virtual addresses (load
// bias 0), for the recorder's walks of stack copies (sample_unwinder.h), compiled one FDE
// at a time, the first time a lookup lands in it.
//
// Compiling a whole file up front (BuildFileUnwindTable) costs 50-90 ns a row: 0.8-1.1 s of
// CPU for a PyTorch process's libraries on the H100 host, of which a 99 Hz profile looks up
// a few thousand PCs. Indexing a file instead costs opening and mapping it, reading its
// program headers and parsing its `.eh_frame_hdr`: the header's table (initial location,
// FDE address) sorted by initial location is searched in place, where the file stays
// mapped for as long as the rules live (a file truncated in place meanwhile, rather than
// replaced as installers and linkers do, would fault a read: as it would the processes
// that run it). A lookup finds the last FDE starting at or below the address, compiles it
// once (CompileFdeAt) into rows kept by table index, and takes the row that covers the
// address; an address at or past that FDE's end has none, what the whole table's gap rows
// say (BuildModuleTable: the later of two overlapping FDEs wins from its start on). An FDE
// the table lists but that cannot be used (damaged, outside `.eh_frame` or the file's
// segments) is skipped for the one before it, as the whole table leaves it out: the rule
// is the same either way (sample_unwinder_test compares them on real files). Each address
// looked up is cached, so a PC seen before costs one hash lookup.
// Each FDE's CIE is read again at its compile (CompileFdeAt): keeping the last one read
// saved ~10% when compiling every FDE in order, less for the scattered FDEs of a profile.
//
// A file whose header has no table we can search (none, an empty one, another encoding,
// entries past the header's end) is compiled whole, as before (rare: GNU ld and lld write
// that table; none of the 1,553 files with PT_GNU_EH_FRAME on the development VM lacks it).
//
// Every read is bounds-checked: the header table must lie inside the header's bytes, an
// FDE inside `.eh_frame`, and the parser checks its own reads. Nothing here throws: out of
// memory, a file keeps no rules (or a lookup finds none).
//
// Not thread-safe: one thread looks up (the recorder's draining thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "unwind/eh_frame_parser.h"
#include "unwind/table_unwinder.h"
#include "unwind/unwind_table.h"

namespace gpuperf::ebpf {

// Builds the whole table of the ELF file at `path`, at the file's own virtual addresses.
// Always returns a table; its status says whether it has rows. `image`, when given, is the
// file's bytes already in memory (the vDSO).
std::unique_ptr<ModuleUnwindTable> BuildFileUnwindTable(const std::string& path,
                                                        const uint8_t* image = nullptr,
                                                        size_t image_size = 0);

class MappedFile;

class FileUnwindRules {
 public:
  // Nothing is read until the first lookup (or Index). "[vdso]" is this process's own vDSO
  // (the same image in every process of this kernel). `image`, when given, is the file's
  // bytes already in memory, which must outlive this object.
  explicit FileUnwindRules(std::string path, const uint8_t* image = nullptr, size_t image_size = 0);
  ~FileUnwindRules();
  FileUnwindRules(const FileUnwindRules&) = delete;
  FileUnwindRules& operator=(const FileUnwindRules&) = delete;

  // Maps the file and reads its header (or compiles it whole, when its header has no
  // table): once; a lookup calls it first.
  void Index();

  // The rule that covers `address` (in the file's own terms), or false and why not: kNoRow
  // where no FDE covers it (what a table's kNoInfo row says), kNoEhFrame when the file has
  // no usable rules.
  bool Find(uint64_t address, UnwindRule* rule, TableWalkStop* stop);

  bool indexed() const { return indexed_; }
  ModuleTableStatus status() const { return status_; }
  bool compiled_whole() const { return whole_ != nullptr; }
  uint64_t fde_count() const { return fde_count_; }  // FDEs the header lists
  // Where the header says its FDE `index` (< fde_count) begins, in the file's terms (tests).
  uint64_t FdeInitialLocation(size_t index) const;
  // FDEs compiled so far (whole: all of them), usable or not.
  uint64_t fdes_compiled() const;
  // Time spent indexing, compiling and looking up addresses not cached (ns).
  uint64_t build_ns() const { return build_ns_; }

 private:
  // What a lookup cached: an FDE's rows (rows_[first, first + count), count 0 when the FDE
  // cannot be used), or an address's rule (kNoInfo: none).
  struct CompiledFde {
    uint64_t begin = 0, end = 0;
    uint32_t first = 0, count = 0;
  };
  void IndexImage(const uint8_t* image, size_t size);
  bool UseHeaderTable(const uint8_t* image, size_t size);
  bool FindLazily(uint64_t address, UnwindRule* rule, TableWalkStop* stop);
  UnwindRule RuleAt(uint64_t address);
  const CompiledFde& FdeAt(size_t index);
  uint64_t FdeOffset(size_t index) const;

  std::string path_;
  const uint8_t* image_ = nullptr;
  size_t image_size_ = 0;
  std::unique_ptr<MappedFile> file_;  // while lookups read it
  bool indexed_ = false;
  ModuleTableStatus status_ = ModuleTableStatus::kPending;
  std::unique_ptr<ModuleUnwindTable> whole_;  // no usable header table: compiled whole

  uint64_t start_ = 0, end_ = 0;  // the file's PT_LOAD segments
  EhFrameBytes hdr_, eh_frame_;
  size_t table_offset_ = 0;  // of the header's table, in hdr_
  uint64_t fde_count_ = 0;

  std::vector<CfiRow> rows_;
  std::unordered_map<uint32_t, CompiledFde> fdes_;      // by index in the header's table
  std::unordered_map<uint64_t, UnwindRule> addresses_;  // lookups so far
  EhFrameStats stats_;
  uint64_t build_ns_ = 0;
};

}  // namespace gpuperf::ebpf
