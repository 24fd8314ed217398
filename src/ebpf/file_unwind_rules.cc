#include "ebpf/file_unwind_rules.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <tuple>
#include <utility>

#include "unwind/table_walk.h"

namespace gpuperf::ebpf {

// A file mapped read-only for as long as this object lives.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
      void* data = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (data != MAP_FAILED) {
        data_ = static_cast<const uint8_t*>(data);
        size_ = static_cast<size_t>(st.st_size);
      }
    }
    close(fd);
  }
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

namespace {

// Unusable FDEs a lookup steps back over to the one before (as the whole table drops
// them); past that the file is damaged and the address gets no rule.
constexpr int kMaxSkippedFdes = 8;
// Addresses cached per file before the cache starts over (a few MB): the PCs of a profile
// are a few thousand; garbage copies could otherwise grow it without end.
constexpr size_t kMaxCachedAddresses = size_t{1} << 16;

uint64_t NsSince(std::chrono::steady_clock::time_point began) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began)
          .count());
}

// The ELF image's program headers, checked to lie inside it; empty when it is not a
// 64-bit ELF file.
std::vector<Elf64_Phdr> ProgramHeaders(const uint8_t* image, size_t size) {
  std::vector<Elf64_Phdr> headers;
  Elf64_Ehdr eh;
  if (size < sizeof(eh)) return headers;
  std::memcpy(&eh, image, sizeof(eh));
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phoff > size ||
      (size - eh.e_phoff) / sizeof(Elf64_Phdr) < eh.e_phnum) {
    return headers;
  }
  headers.resize(eh.e_phnum);
  std::memcpy(headers.data(), image + eh.e_phoff, eh.e_phnum * sizeof(Elf64_Phdr));
  return headers;
}

// The bytes of the image from virtual address `vaddr` to the end of the PT_LOAD segment
// that holds it (in the file), at that address; size 0 when none holds it.
EhFrameBytes LoadedBytes(const std::vector<Elf64_Phdr>& headers, const uint8_t* image, size_t size,
                         uint64_t vaddr) {
  for (const Elf64_Phdr& ph : headers) {
    if (ph.p_type != PT_LOAD || vaddr < ph.p_vaddr || vaddr - ph.p_vaddr >= ph.p_filesz) continue;
    const uint64_t offset = ph.p_offset + (vaddr - ph.p_vaddr);
    const uint64_t end = std::min<uint64_t>(ph.p_offset + ph.p_filesz, size);
    if (offset >= end) return {};
    return {image + offset, static_cast<size_t>(end - offset), vaddr};
  }
  return {};
}

// Where an image's rules come from, at its own addresses.
struct ImageEhFrame {
  uint64_t start = 0, end = 0;  // its PT_LOAD segments
  EhFrameBytes hdr, eh_frame;
  EhFrameHdr parsed;
};

// Finds the image's segments, `.eh_frame_hdr` and `.eh_frame`: kOk, or why not.
ModuleTableStatus LocateEhFrame(const uint8_t* image, size_t size, ImageEhFrame* out) {
  const std::vector<Elf64_Phdr> headers = ProgramHeaders(image, size);
  uint64_t start = UINT64_MAX, end = 0;
  for (const Elf64_Phdr& ph : headers) {
    if (ph.p_type != PT_LOAD) continue;
    start = std::min<uint64_t>(start, ph.p_vaddr & ~uint64_t{4095});
    end = std::max<uint64_t>(end, ph.p_vaddr + ph.p_memsz);
  }
  if (end <= start) return ModuleTableStatus::kUnreadable;
  out->start = start;
  out->end = end;
  auto found = std::find_if(headers.begin(), headers.end(), [](const Elf64_Phdr& ph) {
    return ph.p_type == PT_GNU_EH_FRAME && ph.p_filesz > 0;
  });
  if (found == headers.end()) return ModuleTableStatus::kNoEhFrame;
  out->hdr = LoadedBytes(headers, image, size, found->p_vaddr);
  out->hdr.size = std::min<size_t>(out->hdr.size, found->p_filesz);
  if (out->hdr.size == 0 || !ParseEhFrameHdr(out->hdr, &out->parsed)) {
    return ModuleTableStatus::kUnreadable;
  }
  out->eh_frame = LoadedBytes(headers, image, size, out->parsed.eh_frame_address);
  return out->eh_frame.size == 0 ? ModuleTableStatus::kUnreadable : ModuleTableStatus::kOk;
}

// The compile of CompileModule (unwind_table.cc), from a file's bytes instead of memory, at
// the file's own addresses: the table spans its PT_LOAD segments.
void CompileImage(const uint8_t* image, size_t size, ModuleUnwindTable* table) {
  ImageEhFrame at;
  table->status = LocateEhFrame(image, size, &at);
  table->start = at.start;
  table->end = at.end;
  if (table->status != ModuleTableStatus::kOk) return;
  std::vector<CfiRow> rows;
  std::vector<FdeSpan> spans;
  if (!CompileEhFrame(at.eh_frame, &at.hdr, &at.parsed, &rows, &spans, &table->stats)) {
    table->status = ModuleTableStatus::kUnreadable;
    return;
  }
  BuildModuleTable(table->start, table->end, rows, std::move(spans), table);  // or kTooLarge
}

// Whether the header's table can be searched in place: what CompileEhFrame reads too (it
// reads the section front to back otherwise), and few enough entries for 32-bit indexes.
bool SearchableTable(const ImageEhFrame& at) {
  return HdrTableUsable(at.hdr, at.parsed) && at.parsed.fde_count <= UINT32_MAX;
}

// Our own vDSO's image: where it is and how long (up to the end of its last segment).
std::pair<const uint8_t*, size_t> OwnVdso() {
  const auto* base = reinterpret_cast<const uint8_t*>(getauxval(AT_SYSINFO_EHDR));
  if (base == nullptr) return {nullptr, 0};
  Elf64_Ehdr eh;
  std::memcpy(&eh, base, sizeof(eh));
  size_t size = sizeof(eh);
  const std::vector<Elf64_Phdr> headers =
      ProgramHeaders(base, eh.e_phoff + static_cast<size_t>(eh.e_phnum) * sizeof(Elf64_Phdr));
  for (const Elf64_Phdr& ph : headers) {
    size = std::max<size_t>(size, ph.p_offset + ph.p_filesz);
  }
  return {base, headers.empty() ? 0 : size};
}

// One entry of the header's table, read in place (alignment 1: the bytes are the file's):
// the FDE's initial location and its address, each an int32 relative to the header.
struct HdrEntry {
  uint8_t bytes[8];

  int64_t Field(int i) const {
    int32_t value;
    std::memcpy(&value, bytes + 4 * i, sizeof(value));
    return value;
  }
};
static_assert(sizeof(HdrEntry) == 8 && alignof(HdrEntry) == 1);

}  // namespace

std::unique_ptr<ModuleUnwindTable> BuildFileUnwindTable(const std::string& path,
                                                        const uint8_t* image, size_t image_size) {
  auto table = std::make_unique<ModuleUnwindTable>();
  table->name = path;
  table->status = ModuleTableStatus::kUnreadable;
  try {
    if (image != nullptr) {
      CompileImage(image, image_size, table.get());
    } else {
      const MappedFile file(path);
      if (file.data() != nullptr) CompileImage(file.data(), file.size(), table.get());
    }
  } catch (const std::bad_alloc&) {
    table->status = ModuleTableStatus::kOutOfMemory;
  }
  return table;
}

FileUnwindRules::FileUnwindRules(std::string path, const uint8_t* image, size_t image_size)
    : path_(std::move(path)), image_(image), image_size_(image_size) {}

FileUnwindRules::~FileUnwindRules() = default;

void FileUnwindRules::Index() {
  if (indexed_) return;
  indexed_ = true;
  const auto began = std::chrono::steady_clock::now();
  status_ = ModuleTableStatus::kUnreadable;
  try {
    const bool vdso = path_ == "[vdso]";
    if (vdso && image_ == nullptr) {
      static const std::pair<const uint8_t*, size_t> own = OwnVdso();
      std::tie(image_, image_size_) = own;
    }
    if (image_ != nullptr) {
      IndexImage(image_, image_size_);
    } else if (vdso) {
      status_ = ModuleTableStatus::kNoEhFrame;
    } else {
      file_ = std::make_unique<MappedFile>(path_);
      if (file_->data() != nullptr) IndexImage(file_->data(), file_->size());
      if (status_ != ModuleTableStatus::kOk || whole_ != nullptr) file_.reset();  // not read again
    }
  } catch (const std::bad_alloc&) {
    file_.reset();
    whole_.reset();
    status_ = ModuleTableStatus::kOutOfMemory;
  }
  build_ns_ += NsSince(began);
}

void FileUnwindRules::IndexImage(const uint8_t* image, size_t size) {
  ImageEhFrame at;
  status_ = LocateEhFrame(image, size, &at);
  if (status_ != ModuleTableStatus::kOk) return;
  if (!SearchableTable(at)) {  // rare: compiled whole, as every file was before
    whole_ = std::make_unique<ModuleUnwindTable>();
    whole_->name = path_;
    CompileImage(image, size, whole_.get());
    status_ = whole_->status;
    return;
  }
  start_ = at.start;
  end_ = at.end;
  hdr_ = at.hdr;
  eh_frame_ = at.eh_frame;
  table_offset_ = at.parsed.table_offset;
  fde_count_ = at.parsed.fde_count;
}

uint64_t FileUnwindRules::fdes_compiled() const {
  if (whole_ != nullptr) return whole_->stats.fdes + whole_->stats.bad_fdes;
  return fdes_.size();
}

bool FileUnwindRules::Find(uint64_t address, UnwindRule* rule, TableWalkStop* stop) {
  if (!indexed_) Index();
  UnwindRule found;
  if (whole_ != nullptr) {
    if (!RuntimeRules::FindInTable(*whole_, address, &found, stop)) return false;
  } else if (!FindLazily(address, &found, stop)) {
    return false;
  }
  if (found.cfa == CfaKind::kNoInfo) {  // a gap between FDEs
    *stop = TableWalkStop::kNoRow;
    return false;
  }
  *rule = found;
  return true;
}

bool FileUnwindRules::FindLazily(uint64_t address, UnwindRule* rule, TableWalkStop* stop) {
  if (status_ != ModuleTableStatus::kOk) {
    *stop = TableWalkStop::kNoEhFrame;
    return false;
  }
  if (address - start_ >= end_ - start_) {  // outside the file's segments
    *stop = TableWalkStop::kNoRow;
    return false;
  }
  if (auto cached = addresses_.find(address); cached != addresses_.end()) {
    *rule = cached->second;
    return true;
  }
  try {
    const auto began = std::chrono::steady_clock::now();
    *rule = RuleAt(address);
    if (addresses_.size() >= kMaxCachedAddresses) addresses_.clear();
    addresses_.emplace(address, *rule);
    build_ns_ += NsSince(began);
    return true;
  } catch (const std::bad_alloc&) {
    *stop = TableWalkStop::kNoEhFrame;
    return false;
  }
}

// The rule of the last usable FDE starting at or below `address`, if it covers it.
UnwindRule FileUnwindRules::RuleAt(uint64_t address) {
  const auto* table = reinterpret_cast<const HdrEntry*>(hdr_.data + table_offset_);
  const auto location = static_cast<int64_t>(address - hdr_.address);
  const HdrEntry* last = LastAtOrBelow(table, static_cast<size_t>(fde_count_), location,
                                       [](const HdrEntry& e) { return e.Field(0); });
  if (last->Field(0) > location) return {};  // before the first FDE
  auto index = static_cast<size_t>(last - table);
  for (int skipped = 0; skipped <= kMaxSkippedFdes; ++skipped) {
    const CompiledFde& fde = FdeAt(index);
    if (fde.count > 0) {
      if (address < fde.begin || address >= fde.end) return {};  // past its end: a gap
      const CfiRow* row = LastAtOrBelow(rows_.data() + fde.first, fde.count, address,
                                        [](const CfiRow& r) { return r.pc; });
      return row->pc <= address ? row->rule : UnwindRule{};
    }
    if (index == 0) break;
    --index;
  }
  return {};
}

uint64_t FileUnwindRules::FdeInitialLocation(size_t index) const {
  if (index >= fde_count_) return 0;
  const auto* entry = reinterpret_cast<const HdrEntry*>(hdr_.data + table_offset_) + index;
  return hdr_.address + static_cast<uint64_t>(entry->Field(0));
}

uint64_t FileUnwindRules::FdeOffset(size_t index) const {
  const auto* entry = reinterpret_cast<const HdrEntry*>(hdr_.data + table_offset_) + index;
  const uint64_t fde_address = hdr_.address + static_cast<uint64_t>(entry->Field(1));
  return fde_address - eh_frame_.address;  // wraps to huge when below .eh_frame
}

// The FDE at `index` in the header's table, compiled the first time it is asked for.
const FileUnwindRules::CompiledFde& FileUnwindRules::FdeAt(size_t index) {
  const auto key = static_cast<uint32_t>(index);
  if (auto found = fdes_.find(key); found != fdes_.end()) return found->second;
  CompiledFde fde;  // count 0: unusable
  const uint64_t offset = FdeOffset(index);
  const size_t rows_before = rows_.size();
  FdeSpan span;
  // As BuildModuleTable, an FDE outside the file's segments is left out.
  if (offset < eh_frame_.size && CompileFdeAt(eh_frame_, offset, &rows_, &span, &stats_) &&
      span.begin >= start_ && span.end <= end_ && span.count > 0) {
    fde = {span.begin, span.end, span.first, span.count};
  } else {
    rows_.resize(rows_before);
  }
  return fdes_.emplace(key, fde).first->second;
}

}  // namespace gpuperf::ebpf
