#include "ebpf/sample_unwinder.h"

#include <algorithm>
#include <new>

namespace gpuperf::ebpf {

const PlacedModule* PlacedRules::Module(uint64_t address) const {
  if (modules.empty()) return nullptr;
  const PlacedModule* candidate = LastAtOrBelow(modules.data(), modules.size(), address,
                                                [](const PlacedModule& m) { return m.start; });
  return address >= candidate->start && address < candidate->end ? candidate : nullptr;
}

FileUnwindRules* SampleUnwinder::RulesFor(const MappedModule& module) {
  std::unique_ptr<FileUnwindRules>& rules = files_[FileKey{module.path, module.build_id}];
  if (rules == nullptr) rules = std::make_unique<FileUnwindRules>(module.path);
  return rules.get();
}

void SampleUnwinder::AddModule(uint32_t pid, const MappedModule& module) {
  if (module.end <= module.start) return;
  try {
    FileUnwindRules* rules = RulesFor(module);
    std::vector<PlacedModule>& placed = processes_[pid].placed;
    // A module loaded where another was (a dlclose since) replaces it.
    std::erase_if(placed, [&](const PlacedModule& m) {
      return m.start < module.end && module.start < m.end;
    });
    auto at =
        std::lower_bound(placed.begin(), placed.end(), module.start,
                         [](const PlacedModule& m, uint64_t start) { return m.start < start; });
    placed.insert(at, PlacedModule{module.start, module.end, module.load_bias, rules});
  } catch (const std::bad_alloc&) {
    // Out of memory: the module is left out, and walks through it keep frame pointers.
  }
}

void SampleUnwinder::ForgetProcess(uint32_t pid) {
  processes_.erase(pid);
}

uint64_t SampleUnwinder::tables_built() const {
  uint64_t indexed = 0;
  for (const auto& [key, rules] : files_) indexed += rules->indexed() ? 1 : 0;
  return indexed;
}

uint64_t SampleUnwinder::fdes_compiled() const {
  uint64_t fdes = 0;
  for (const auto& [key, rules] : files_) fdes += rules->fdes_compiled();
  return fdes;
}

uint64_t SampleUnwinder::build_ns() const {
  uint64_t ns = 0;
  for (const auto& [key, rules] : files_) ns += rules->build_ns();
  return ns;
}

TableWalkResult SampleUnwinder::Unwind(uint32_t pid, const gp_user_stack_copy& copy, uint64_t* pcs,
                                       int max_depth) {
  TableWalkResult result;
  result.stop = TableWalkStop::kNoTables;
  auto found = processes_.find(pid);
  const size_t size = std::min<size_t>(copy.size, GP_STACK_COPY_BYTES) & ~size_t{7};
  if (found == processes_.end() || size == 0 || max_depth <= 0) return result;
  const StackRange range{copy.sp, copy.sp + size};
  if (range.high < range.low) return result;  // wrapped: not a stack
  CopiedStack memory;
  memory.bytes = reinterpret_cast<const uint8_t*>(copy.words);
  memory.base = copy.sp;
  memory.more_above = copy.size >= GP_STACK_COPY_BYTES;
  const FrameRegisters start{copy.ip, copy.sp, copy.bp};
  return WalkStackWithTables<true>(PlacedRules{found->second.placed}, start, range, memory, pcs,
                                   max_depth, nullptr);
}

}  // namespace gpuperf::ebpf
