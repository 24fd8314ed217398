#include "ebpf/sample_unwinder.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "inject/stack/eh_frame_parser.h"

namespace gpuperf::ebpf {
namespace {

// A file mapped read-only for as long as its table is built.
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

// The compile of CompileModule (unwind_table.cc), from a file's bytes instead of memory, at
// the file's own addresses: the table spans its PT_LOAD segments.
void CompileImage(const uint8_t* image, size_t size, ModuleUnwindTable* table) {
  const std::vector<Elf64_Phdr> headers = ProgramHeaders(image, size);
  table->start = UINT64_MAX;
  table->end = 0;
  for (const Elf64_Phdr& ph : headers) {
    if (ph.p_type != PT_LOAD) continue;
    table->start = std::min<uint64_t>(table->start, ph.p_vaddr & ~uint64_t{4095});
    table->end = std::max<uint64_t>(table->end, ph.p_vaddr + ph.p_memsz);
  }
  if (table->end <= table->start) {
    table->start = table->end = 0;
    table->status = ModuleTableStatus::kUnreadable;
    return;
  }
  auto found = std::find_if(headers.begin(), headers.end(), [](const Elf64_Phdr& ph) {
    return ph.p_type == PT_GNU_EH_FRAME && ph.p_filesz > 0;
  });
  if (found == headers.end()) {
    table->status = ModuleTableStatus::kNoEhFrame;
    return;
  }
  EhFrameBytes hdr = LoadedBytes(headers, image, size, found->p_vaddr);
  hdr.size = std::min<size_t>(hdr.size, found->p_filesz);
  EhFrameHdr parsed;
  if (hdr.size == 0 || !ParseEhFrameHdr(hdr, &parsed)) {
    table->status = ModuleTableStatus::kUnreadable;
    return;
  }
  const EhFrameBytes eh_frame = LoadedBytes(headers, image, size, parsed.eh_frame_address);
  std::vector<CfiRow> rows;
  std::vector<FdeSpan> spans;
  if (eh_frame.size == 0 ||
      !CompileEhFrame(eh_frame, &hdr, &parsed, &rows, &spans, &table->stats)) {
    table->status = ModuleTableStatus::kUnreadable;
    return;
  }
  if (BuildModuleTable(table->start, table->end, rows, std::move(spans), table)) {
    table->status = ModuleTableStatus::kOk;
  }
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

const PlacedModule* PlacedRules::Module(uint64_t address) const {
  if (modules.empty()) return nullptr;
  const PlacedModule* candidate = LastAtOrBelow(modules.data(), modules.size(), address,
                                                [](const PlacedModule& m) { return m.start; });
  return address >= candidate->start && address < candidate->end ? candidate : nullptr;
}

void SampleUnwinder::AddModule(uint32_t pid, const MappedModule& module) {
  if (module.end <= module.start) return;
  Process& p = processes_[pid];
  // A module loaded where another was (a dlclose since) replaces it.
  for (size_t i = p.modules.size(); i-- > 0;) {
    if (p.modules[i].start < module.end && module.start < p.modules[i].end) {
      p.modules.erase(p.modules.begin() + static_cast<std::ptrdiff_t>(i));
      p.placed.erase(p.placed.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  auto at = std::lower_bound(p.modules.begin(), p.modules.end(), module.start,
                             [](const MappedModule& m, uint64_t start) { return m.start < start; });
  const auto index = at - p.modules.begin();
  p.modules.insert(at, module);
  p.placed.insert(p.placed.begin() + index,
                  PlacedModule{module.start, module.end, module.load_bias, &pending_});
}

void SampleUnwinder::ForgetProcess(uint32_t pid) {
  processes_.erase(pid);
}

SampleUnwinder::~SampleUnwinder() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (builder_.joinable()) builder_.join();
}

const ModuleUnwindTable* SampleUnwinder::TableFor(const MappedModule& module) {
  FileKey key{module.path, module.build_id};
  if (auto it = tables_.find(key); it != tables_.end()) return it->second.get();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [file, table] : built_) tables_[file] = std::move(table);
    built_.clear();
    if (auto it = tables_.find(key); it != tables_.end()) return it->second.get();
    if (!asked_.insert(key).second) return nullptr;  // being built
    queue_.push_back(std::move(key));
    if (!builder_.joinable()) builder_ = std::thread([this] { BuildLoop(); });
  }
  wake_.notify_one();
  return nullptr;
}

void SampleUnwinder::BuildLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    FileKey file = std::move(queue_.front());
    queue_.pop_front();
    building_ = true;
    lock.unlock();
    const auto began = std::chrono::steady_clock::now();
    std::unique_ptr<ModuleUnwindTable> table;
    try {
      if (file.first == "[vdso]") {
        static const std::pair<const uint8_t*, size_t> vdso = OwnVdso();
        table = BuildFileUnwindTable(file.first, vdso.first, vdso.second);
        if (vdso.first == nullptr) table->status = ModuleTableStatus::kNoEhFrame;
      } else {
        table = BuildFileUnwindTable(file.first);
      }
    } catch (...) {  // out of memory: the file's modules keep frame-pointer stacks
    }
    build_ns_.fetch_add(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                  std::chrono::steady_clock::now() - began)
                                                  .count()),
                        std::memory_order_relaxed);
    lock.lock();
    building_ = false;
    if (table != nullptr) {
      tables_built_.fetch_add(1, std::memory_order_relaxed);
      try {
        built_.emplace_back(std::move(file), std::move(table));
      } catch (...) {
      }
    }
    if (queue_.empty()) idle_.notify_all();
  }
}

void SampleUnwinder::AskForCallers(Process& p, const uint8_t* bytes, size_t size) {
  // Asked one at a time, the tables of a chain through N modules would come one drain
  // apart (each walk stops at the next missing one): N x 50 ms of samples with frame-pointer
  // stacks. The words of the copy that fall in a module's code are, most of them, return
  // addresses into the modules further out: their tables are asked for at once. Not words
  // in its data: pointers to a library's data asked for tables no walk needed (libtorch's
  // among them: a third more build time on the H100). Costs a search per word, and only
  // while tables are missing.
  const PlacedRules rules{p.placed};
  for (size_t at = 0; at + 8 <= size; at += 8) {
    uint64_t word;
    std::memcpy(&word, bytes + at, sizeof(word));
    const PlacedModule* module = rules.Module(word);
    if (module == nullptr || module->table != &pending_) continue;
    const auto index = static_cast<size_t>(module - p.placed.data());
    const MappedModule& mapped = p.modules[index];
    if (word < mapped.code_start || word >= mapped.code_end) continue;
    if (const ModuleUnwindTable* table = TableFor(p.modules[index])) p.placed[index].table = table;
  }
}

void SampleUnwinder::WaitForTables() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !building_; });
}

TableWalkResult SampleUnwinder::Unwind(uint32_t pid, const gp_user_stack_copy& copy, uint64_t* pcs,
                                       int max_depth) {
  TableWalkResult result;
  result.stop = TableWalkStop::kNoTables;
  auto found = processes_.find(pid);
  const size_t size = std::min<size_t>(copy.size, GP_STACK_COPY_BYTES) & ~size_t{7};
  if (found == processes_.end() || size == 0 || max_depth <= 0) return result;
  Process& p = found->second;
  const StackRange range{copy.sp, copy.sp + size};
  if (range.high < range.low) return result;  // wrapped: not a stack
  CopiedStack memory;
  memory.bytes = reinterpret_cast<const uint8_t*>(copy.words);
  memory.base = copy.sp;
  memory.more_above = copy.size >= GP_STACK_COPY_BYTES;
  const FrameRegisters start{copy.ip, copy.sp, copy.bp};
  // Each pass builds at most the one table the walk stopped at, then walks again.
  for (size_t pass = 0; pass <= p.modules.size(); ++pass) {
    result = WalkStackWithTables<true>(PlacedRules{p.placed}, start, range, memory, pcs, max_depth,
                                       nullptr);
    if (result.stop != TableWalkStop::kPending || result.depth == 0) return result;
    const uint64_t pc = pcs[result.depth - 1];
    const PlacedModule* module = PlacedRules{p.placed}.Module(result.depth == 1 ? pc : pc - 1);
    if (module == nullptr || module->table != &pending_) return result;  // cannot happen
    const auto index = static_cast<size_t>(module - p.placed.data());
    const ModuleUnwindTable* table = TableFor(p.modules[index]);
    if (table == nullptr) {  // kPending: asked for, built meanwhile
      AskForCallers(p, memory.bytes, size);
      return result;
    }
    p.placed[index].table = table;
  }
  return result;
}

}  // namespace gpuperf::ebpf
