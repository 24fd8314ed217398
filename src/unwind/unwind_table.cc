#include "unwind/unwind_table.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstddef>

#include <bit>
#include <chrono>
#include <new>
#include <unordered_map>

namespace gpuperf {
namespace {

constexpr uint64_t kMaxModuleSpan = uint64_t{1} << 32;
constexpr std::chrono::milliseconds kPublishAfter{5};

// The bytes of the module's readable segment that holds `address`, from `address` to the
// segment's end; size 0 when no segment holds it.
EhFrameBytes SegmentFrom(const ModuleUnwindTable& table, uint64_t address) {
  for (const ModuleUnwindTable::Segment& segment : table.readable) {
    if (address >= segment.begin && address < segment.end) {
      return {reinterpret_cast<const uint8_t*>(address), static_cast<size_t>(segment.end - address),
              address};
    }
  }
  return {};
}

// Compiles one module's `.eh_frame` into `table` (a copy of its pending table). The module
// must stay mapped meanwhile (PinModule).
void CompileModule(ModuleUnwindTable* table) {
  if (table->eh_frame_hdr == 0 || table->eh_frame_hdr_size == 0) {
    table->status = ModuleTableStatus::kNoEhFrame;
    return;
  }
  EhFrameBytes hdr = SegmentFrom(*table, table->eh_frame_hdr);
  if (hdr.size > table->eh_frame_hdr_size) hdr.size = table->eh_frame_hdr_size;
  EhFrameHdr parsed;
  if (hdr.size == 0 || !ParseEhFrameHdr(hdr, &parsed)) {
    table->status = ModuleTableStatus::kUnreadable;
    return;
  }
  const EhFrameBytes eh_frame = SegmentFrom(*table, parsed.eh_frame_address);
  if (eh_frame.size == 0) {
    table->status = ModuleTableStatus::kUnreadable;
    return;
  }
  std::vector<CfiRow> rows;
  std::vector<FdeSpan> spans;
  if (!CompileEhFrame(eh_frame, &hdr, &parsed, &rows, &spans, &table->stats)) {
    table->status = ModuleTableStatus::kUnreadable;
    return;
  }
  if (BuildModuleTable(table->start, table->end, rows, std::move(spans), table)) {
    table->status = ModuleTableStatus::kOk;
  }
}

// Keeps the module of `table` loaded while it is read: a reference from dlopen(RTLD_NOLOAD),
// checked to be the same object (same load bias). The main program and the vDSO (no path)
// are never unloaded. False when the module is gone.
bool PinModule(const ModuleUnwindTable& table, void** handle) {
  *handle = nullptr;
  if (table.name.empty()) return true;
  void* pinned = dlopen(table.name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (pinned == nullptr) return table.name.find('/') == std::string::npos;
  link_map* map = nullptr;
  if (dlinfo(pinned, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr ||
      map->l_addr != table.load_bias) {
    dlclose(pinned);
    return false;
  }
  *handle = pinned;
  return true;
}

// A pending table for one loaded object: its range and where its bytes are.
std::unique_ptr<ModuleUnwindTable> PendingTable(const dl_phdr_info* info, uint64_t start,
                                                uint64_t end) {
  auto table = std::make_unique<ModuleUnwindTable>();
  table->start = start;
  table->end = end;
  table->load_bias = info->dlpi_addr;
  table->name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  table->status = ModuleTableStatus::kPending;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
    if (phdr.p_type == PT_GNU_EH_FRAME && phdr.p_memsz > 0) {
      table->eh_frame_hdr = info->dlpi_addr + phdr.p_vaddr;
      table->eh_frame_hdr_size = phdr.p_memsz;
    }
    if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_R) != 0) {
      const uint64_t begin = info->dlpi_addr + phdr.p_vaddr;
      table->readable.push_back({begin, begin + phdr.p_memsz});
    }
  }
  return table;
}

struct RescanContext {
  const UnwindSnapshot* current;                            // may be null
  std::vector<std::unique_ptr<ModuleUnwindTable>>* tables;  // new pending tables go here
  std::vector<UnwindModule> modules;
};

bool SameModule(const ModuleUnwindTable& table, const dl_phdr_info* info, uint64_t start,
                uint64_t end) {
  const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  return table.start == start && table.end == end && table.load_bias == info->dlpi_addr &&
         table.name == name;
}

bool SameModules(const std::vector<UnwindModule>& a, const std::vector<UnwindModule>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const UnwindModule& x, const UnwindModule& y) {
                      return x.start == y.start && x.end == y.end && x.table == y.table;
                    });
}

// The layout of a rescan's modules: the old one's, unless one of its modules is not among
// them (at the same addresses, with the same table). Both lists are sorted by start.
uint64_t NextLayout(const UnwindSnapshot* old, const std::vector<UnwindModule>& now) {
  if (old == nullptr) return 0;
  auto next = now.begin();
  for (const UnwindModule& before : old->modules) {
    while (next != now.end() && next->start < before.start) ++next;
    if (next == now.end() || next->start != before.start || next->end != before.end ||
        next->table != before.table) {
      return old->layout + 1;
    }
  }
  return old->layout;
}

// Lists one loaded object, under the loader's lock: nothing slow here.
int ListModule(dl_phdr_info* info, size_t, void* data) {
  auto* context = static_cast<RescanContext*>(data);
  // Called from C: nothing may escape.
  try {
    uint64_t lowest = UINT64_MAX, highest = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
      const ElfW(Phdr)& phdr = info->dlpi_phdr[i];
      if (phdr.p_type != PT_LOAD) continue;
      lowest = std::min<uint64_t>(lowest, info->dlpi_addr + phdr.p_vaddr);
      highest = std::max<uint64_t>(highest, info->dlpi_addr + phdr.p_vaddr + phdr.p_memsz);
    }
    if (lowest >= highest) return 0;
    const ModuleUnwindTable* table = nullptr;
    if (context->current != nullptr) {
      const ModuleUnwindTable* known = context->current->Find(lowest);
      if (known != nullptr && SameModule(*known, info, lowest, highest)) table = known;
    }
    if (table == nullptr) {
      context->tables->push_back(PendingTable(info, lowest, highest));
      table = context->tables->back().get();
    }
    context->modules.push_back({lowest, highest, table});
  } catch (...) {
    // Out of memory for the bookkeeping: this module is left out; its PCs fall back.
  }
  return 0;
}

struct LoaderCounts {
  uint64_t adds = 0, subs = 0;
};

int ReadLoaderCounts(dl_phdr_info* info, size_t size, void* data) {
  auto* counts = static_cast<LoaderCounts*>(data);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    counts->adds = info->dlpi_adds;
    counts->subs = info->dlpi_subs;
  }
  return 1;  // the first object is enough
}

// Numbers a module's distinct rules. The first two are always "no FDE" and
// "unexpressible"; past 65536 rules, new ones become "unexpressible" (counted).
class RuleIds {
 public:
  explicit RuleIds(std::vector<UnwindRule>* rules) : rules_(rules) {
    Of(UnwindRule{}, nullptr);
    UnwindRule unexpressible;
    unexpressible.cfa = CfaKind::kUnexpressible;
    unexpressible_ = Of(unexpressible, nullptr);
  }
  uint16_t Of(const UnwindRule& rule, uint32_t* over_limit) {
    const auto key = std::bit_cast<uint64_t>(rule);
    auto found = ids_.find(key);
    if (found != ids_.end()) return found->second;
    if (rules_->size() > UINT16_MAX) {
      if (over_limit != nullptr) ++*over_limit;
      return unexpressible_;
    }
    const auto id = static_cast<uint16_t>(rules_->size());
    rules_->push_back(rule);
    ids_.emplace(key, id);
    return id;
  }

 private:
  std::vector<UnwindRule>* rules_;
  std::unordered_map<uint64_t, uint16_t> ids_;
  uint16_t unexpressible_ = 0;
};

// Buckets of 2^shift bytes over the rows' range, the smallest (from 4 bytes) that makes at
// most one bucket per two rows: 2 bytes more per row, two or three rows per bucket on average.
void BuildBuckets(ModuleUnwindTable* table) {
  const std::vector<uint32_t>& starts = table->row_starts;
  if (starts.empty()) return;
  const uint64_t range = starts.back() - starts.front();
  unsigned shift = 2;
  while (shift < 32 && (range >> shift) > starts.size() / 2) ++shift;
  const size_t count = static_cast<size_t>(range >> shift) + 2;
  table->bucket_shift = static_cast<uint8_t>(shift);
  table->buckets.assign(count, 0);
  size_t row = 0;
  for (size_t b = 0; b < count; ++b) {
    const uint64_t offset = starts.front() + (static_cast<uint64_t>(b) << shift);
    while (row + 1 < starts.size() && starts[row + 1] <= offset) ++row;
    table->buckets[b] = static_cast<uint32_t>(row);
  }
}

}  // namespace

const char* ModuleTableStatusName(ModuleTableStatus status) {
  switch (status) {
    case ModuleTableStatus::kOk:
      return "ok";
    case ModuleTableStatus::kNoEhFrame:
      return "no .eh_frame_hdr";
    case ModuleTableStatus::kUnreadable:
      return "unreadable .eh_frame";
    case ModuleTableStatus::kTooLarge:
      return "too large";
    case ModuleTableStatus::kOutOfMemory:
      return "out of memory";
    case ModuleTableStatus::kPending:
      return "not compiled yet";
    case ModuleTableStatus::kUnloaded:
      return "unloaded before it was compiled";
  }
  return "?";
}

bool BuildModuleTable(uint64_t start, uint64_t end, const std::vector<CfiRow>& rows,
                      std::vector<FdeSpan> spans, ModuleUnwindTable* out) {
  out->row_starts.clear();
  out->row_rules.clear();
  out->rules.clear();
  if (end <= start || end - start >= kMaxModuleSpan) {
    out->status = ModuleTableStatus::kTooLarge;
    return false;
  }
  const size_t before = spans.size();
  std::erase_if(spans, [&](const FdeSpan& s) { return s.begin < start || s.end > end; });
  out->dropped_fdes += static_cast<uint32_t>(before - spans.size());
  std::stable_sort(spans.begin(), spans.end(),
                   [](const FdeSpan& a, const FdeSpan& b) { return a.begin < b.begin; });
  out->row_starts.reserve(rows.size() + spans.size());
  out->row_rules.reserve(rows.size() + spans.size());
  RuleIds ids(&out->rules);
  auto emit = [&](uint64_t pc, const UnwindRule& rule) {
    const uint16_t id = ids.Of(rule, &out->rules_over_limit);
    if (!out->row_rules.empty() && out->row_rules.back() == id) return;
    out->row_starts.push_back(static_cast<uint32_t>(pc - start));
    out->row_rules.push_back(id);
  };
  for (size_t i = 0; i < spans.size(); ++i) {
    const FdeSpan& span = spans[i];
    const uint64_t next_begin = i + 1 < spans.size() ? spans[i + 1].begin : UINT64_MAX;
    const uint64_t limit = std::min(span.end, next_begin);
    if (limit <= span.begin) {
      ++out->dropped_fdes;  // hidden entirely by the next span
      continue;
    }
    for (uint32_t r = span.first; r < span.first + span.count && r < rows.size(); ++r) {
      if (rows[r].pc >= limit) break;
      emit(rows[r].pc, rows[r].rule);
    }
    if (span.end < next_begin) emit(span.end, UnwindRule{});  // a gap: no FDE here
  }
  out->row_starts.shrink_to_fit();
  out->row_rules.shrink_to_fit();
  out->rules.shrink_to_fit();
  BuildBuckets(out);
  return true;
}

int UnwindTables::Refresh() {
  Rescan(/*force=*/true);
  return CompilePending(/*only_wanted=*/false);
}

void UnwindTables::Publish(std::vector<UnwindModule> modules, uint64_t layout) {
  snapshots_.push_back(std::make_unique<UnwindSnapshot>());
  snapshots_.back()->modules = std::move(modules);
  snapshots_.back()->layout = layout;
  current_.store(snapshots_.back().get(), std::memory_order_release);
}

bool UnwindTables::Rescan(bool force) {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    LoaderCounts counts;
    dl_iterate_phdr(ReadLoaderCounts, &counts);
    const UnwindSnapshot* old = current_.load(std::memory_order_acquire);
    const bool moved = counts.adds != loader_adds_ || counts.subs != loader_subs_;
    if (!force && old != nullptr && !moved) return false;
    RescanContext context{old, &tables_, {}};
    dl_iterate_phdr(ListModule, &context);
    loader_adds_ = counts.adds;
    loader_subs_ = counts.subs;
    std::sort(context.modules.begin(), context.modules.end(),
              [](const UnwindModule& a, const UnwindModule& b) { return a.start < b.start; });
    if (old != nullptr && SameModules(old->modules, context.modules)) return false;
    Publish(std::move(context.modules), NextLayout(old, context.modules));
    return true;
  } catch (...) {
    return false;  // the previous snapshot stays
  }
}

int UnwindTables::CompilePending(bool only_wanted, CompiledFn on_compiled) {
  int compiled = 0;
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    const UnwindSnapshot* current = current_.load(std::memory_order_acquire);
    if (current == nullptr) return 0;
    std::vector<UnwindModule> modules = current->modules;
    bool unpublished = false;
    for (UnwindModule& module : modules) {
      const ModuleUnwindTable& pending = *module.table;
      if (pending.status != ModuleTableStatus::kPending) continue;
      if (only_wanted && !pending.IsWanted()) continue;
      auto fresh = std::make_unique<ModuleUnwindTable>();
      fresh->start = pending.start;
      fresh->end = pending.end;
      fresh->load_bias = pending.load_bias;
      fresh->name = pending.name;
      fresh->eh_frame_hdr = pending.eh_frame_hdr;
      fresh->eh_frame_hdr_size = pending.eh_frame_hdr_size;
      fresh->readable = pending.readable;
      const auto began = std::chrono::steady_clock::now();
      void* pin = nullptr;
      if (!PinModule(pending, &pin)) {
        fresh->status = ModuleTableStatus::kUnloaded;
      } else {
        try {
          CompileModule(fresh.get());
        } catch (const std::bad_alloc&) {
          fresh->row_starts = {};
          fresh->row_rules = {};
          fresh->rules = {};
          fresh->buckets = {};
          fresh->status = ModuleTableStatus::kOutOfMemory;
        }
        if (pin != nullptr) dlclose(pin);
      }
      tables_.push_back(std::move(fresh));
      module.table = tables_.back().get();
      ++compiled;
      unpublished = true;
      const auto took = std::chrono::steady_clock::now() - began;
      if (on_compiled != nullptr) {
        on_compiled(*module.table,
                    static_cast<uint64_t>(
                        std::chrono::duration_cast<std::chrono::nanoseconds>(took).count()));
      }
      // A large table is published as soon as it is ready, so that stacks which need it
      // and not the next ones stop falling back; small ones together, which keeps the
      // number of snapshots (all kept) low.
      if (took > kPublishAfter) {
        Publish(modules, current->layout);
        unpublished = false;
      }
    }
    if (unpublished) Publish(std::move(modules), current->layout);
  } catch (...) {
    // Out of memory for the bookkeeping: what was published stays.
  }
  return compiled;
}

UnwindTables& ProcessUnwindTables() {
  static UnwindTables* tables = new UnwindTables();
  return *tables;
}

}  // namespace gpuperf
