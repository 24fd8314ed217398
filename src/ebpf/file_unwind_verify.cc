#include "ebpf/file_unwind_verify.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>

#include "ebpf/file_unwind_rules.h"
#include "unwind/table_walk.h"

namespace gpuperf::ebpf {
namespace {

// The whole table's answer at `address`, as a walk reads it: a rule, or none (kNoInfo or no
// row at all: both end the walk with kNoRow).
bool WholeRule(const ModuleUnwindTable& table, uint64_t address, UnwindRule* rule) {
  TableWalkStop stop;
  return RuntimeRules::FindInTable(table, address, rule, &stop) && rule->cfa != CfaKind::kNoInfo;
}

}  // namespace

std::string RulesDiffer(const ModuleUnwindTable& whole, FileUnwindRules& lazy, uint64_t address) {
  UnwindRule expected, got;
  TableWalkStop stop = TableWalkStop::kMaxDepth;
  const bool has_expected = WholeRule(whole, address, &expected);
  const bool has_got = lazy.Find(address, &got, &stop);
  if (has_expected == has_got && (!has_got || expected == got)) return "";
  char line[160];
  std::snprintf(line, sizeof(line), "at 0x%llx: whole %s cfa %d%+d, lazy %s cfa %d%+d (stop %d)",
                static_cast<unsigned long long>(address), has_expected ? "rule" : "none",
                static_cast<int>(expected.cfa), expected.cfa_offset, has_got ? "rule" : "none",
                static_cast<int>(got.cfa), got.cfa_offset, static_cast<int>(stop));
  return line;
}

FileRulesComparison CompareFileRules(const std::string& path, uint64_t seed) {
  FileRulesComparison c;
  const std::unique_ptr<ModuleUnwindTable> whole = BuildFileUnwindTable(path);
  c.whole_status = whole->status;
  c.rows = whole->row_starts.size();
  FileUnwindRules lazy(path);
  lazy.Index();
  c.lazy_status = lazy.status();
  c.lazy_compiled_whole = lazy.compiled_whole();
  c.fdes = lazy.fde_count();
  if (c.whole_status != ModuleTableStatus::kOk || c.lazy_status != ModuleTableStatus::kOk) {
    return c;
  }
  std::mt19937_64 random(seed);
  std::vector<uint64_t> addresses;
  for (uint32_t start : whole->row_starts) {
    addresses.push_back(whole->start + start);
    addresses.push_back(whole->start + start - 1);
  }
  for (size_t i = 0; i < lazy.fde_count(); ++i) {
    const uint64_t begin = lazy.FdeInitialLocation(i);
    const uint64_t next = i + 1 < lazy.fde_count() ? lazy.FdeInitialLocation(i + 1) : begin + 64;
    addresses.push_back(begin);
    addresses.push_back(begin + 1);
    if (next > begin) {
      addresses.push_back(begin + random() % (next - begin));
      addresses.push_back(next - 1);
    }
  }
  std::shuffle(addresses.begin(), addresses.end(), random);  // FDEs compiled in any order
  for (uint64_t address : addresses) {
    std::string differs = RulesDiffer(*whole, lazy, address);
    if (differs.empty()) continue;
    if (++c.mismatches <= 5) c.first_mismatches.push_back(std::move(differs));
  }
  c.addresses = addresses.size();
  c.fdes_compiled = lazy.fdes_compiled();
  return c;
}

}  // namespace gpuperf::ebpf
