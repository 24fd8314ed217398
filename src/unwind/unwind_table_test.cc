// Module tables from compiled rows (gaps, overlaps, merging, lookups at the edges), and the
// tables of this process's real modules.
#include "unwind/unwind_table.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace gpuperf {
namespace {

UnwindRule Rsp(int32_t offset) {
  return {offset, 0, CfaKind::kRsp, RbpKind::kSame};
}

constexpr uint64_t kStart = 0x400000;

TEST(BuildModuleTable, CoversEachFdeAndMarksTheGaps) {
  // Two functions with a gap between them, given out of order.
  const std::vector<CfiRow> rows = {{kStart + 0x100, Rsp(8)},
                                    {kStart + 0x101, Rsp(16)},
                                    {kStart + 0x10, Rsp(8)},
                                    {kStart + 0x14, Rsp(32)}};
  std::vector<FdeSpan> spans = {{kStart + 0x100, kStart + 0x140, 0, 2},
                                {kStart + 0x10, kStart + 0x40, 2, 2}};
  ModuleUnwindTable table;
  table.start = kStart;
  table.end = kStart + 0x1000;
  ASSERT_TRUE(BuildModuleTable(table.start, table.end, rows, spans, &table));
  EXPECT_EQ(table.row_starts, (std::vector<uint32_t>{0x10, 0x14, 0x40, 0x100, 0x101, 0x140}));
  EXPECT_EQ(table.Find(kStart + 0xf), nullptr);  // before the first function
  EXPECT_EQ(*table.Find(kStart + 0x10), Rsp(8));
  EXPECT_EQ(*table.Find(kStart + 0x13), Rsp(8));
  EXPECT_EQ(*table.Find(kStart + 0x14), Rsp(32));
  EXPECT_EQ(*table.Find(kStart + 0x3f), Rsp(32));
  EXPECT_EQ(table.Find(kStart + 0x40)->cfa, CfaKind::kNoInfo);
  EXPECT_EQ(table.Find(kStart + 0xff)->cfa, CfaKind::kNoInfo);
  EXPECT_EQ(*table.Find(kStart + 0x100), Rsp(8));
  EXPECT_EQ(*table.Find(kStart + 0x13f), Rsp(16));
  EXPECT_EQ(table.Find(kStart + 0x140)->cfa, CfaKind::kNoInfo);
  EXPECT_EQ(table.Find(kStart + 0x1000), nullptr);  // outside the module
  EXPECT_EQ(table.Find(kStart - 1), nullptr);
}

TEST(BuildModuleTable, TheLaterOfTwoOverlappingFdesWinsFromItsStart) {
  const std::vector<CfiRow> rows = {{kStart + 0x10, Rsp(8)},
                                    {kStart + 0x30, Rsp(48)},
                                    {kStart + 0x20, Rsp(16)},
                                    {kStart + 0x20, Rsp(24)}};
  // [0x10, 0x40) overlapped by [0x20, 0x28); a duplicate of the latter hides it entirely.
  std::vector<FdeSpan> spans = {{kStart + 0x10, kStart + 0x40, 0, 2},
                                {kStart + 0x20, kStart + 0x28, 2, 1},
                                {kStart + 0x20, kStart + 0x28, 3, 1}};
  ModuleUnwindTable table;
  table.start = kStart;
  table.end = kStart + 0x100;
  ASSERT_TRUE(BuildModuleTable(table.start, table.end, rows, spans, &table));
  EXPECT_EQ(*table.Find(kStart + 0x1f), Rsp(8));
  EXPECT_EQ(*table.Find(kStart + 0x20), Rsp(24));
  EXPECT_EQ(table.Find(kStart + 0x28)->cfa, CfaKind::kNoInfo);
  EXPECT_EQ(table.dropped_fdes, 1u);
}

TEST(BuildModuleTable, DropsFdesOutsideTheModuleAndRefusesHugeModules) {
  const std::vector<CfiRow> rows = {{kStart - 0x10, Rsp(8)}, {kStart + 0x10, Rsp(16)}};
  std::vector<FdeSpan> spans = {{kStart - 0x10, kStart + 0x8, 0, 1},
                                {kStart + 0x10, kStart + 0x20, 1, 1}};
  ModuleUnwindTable table;
  ASSERT_TRUE(BuildModuleTable(kStart, kStart + 0x100, rows, spans, &table));
  EXPECT_EQ(table.dropped_fdes, 1u);
  EXPECT_EQ(table.row_starts, (std::vector<uint32_t>{0x10, 0x20}));
  ModuleUnwindTable huge;
  EXPECT_FALSE(BuildModuleTable(kStart, kStart + (uint64_t{1} << 32), rows, spans, &huge));
  EXPECT_EQ(huge.status, ModuleTableStatus::kTooLarge);
}

const ModuleUnwindTable* TableNamed(const UnwindSnapshot& snapshot, const char* fragment) {
  for (const UnwindModule& m : snapshot.modules) {
    if (m.table->name.find(fragment) != std::string::npos) return m.table;
  }
  return nullptr;
}

TEST(UnwindTables, CompilesThisProcessesModules) {
  UnwindTables tables;
  EXPECT_EQ(tables.snapshot(), nullptr);
  EXPECT_GT(tables.Refresh(), 2);
  const UnwindSnapshot* snapshot = tables.snapshot();
  ASSERT_NE(snapshot, nullptr);
  const ModuleUnwindTable* libc = TableNamed(*snapshot, "libc.so");
  ASSERT_NE(libc, nullptr);
  EXPECT_EQ(libc->status, ModuleTableStatus::kOk);
  EXPECT_TRUE(libc->stats.used_hdr_table);
  EXPECT_GT(libc->stats.fdes, 1000u);
  EXPECT_EQ(libc->stats.bad_fdes, 0u);
  // At a function's first instruction the CFA is RSP+8: the call just pushed the return
  // address. True of every function, whoever compiled it.
  for (void* function : {reinterpret_cast<void*>(&qsort), reinterpret_cast<void*>(&strtol),
                         reinterpret_cast<void*>(&getenv)}) {
    const auto pc = reinterpret_cast<uint64_t>(function);
    ASSERT_EQ(snapshot->Find(pc), libc);
    const UnwindRule* rule = libc->Find(pc);
    ASSERT_NE(rule, nullptr);
    EXPECT_EQ(rule->cfa, CfaKind::kRsp);
    EXPECT_EQ(rule->cfa_offset, 8);
  }
  // The main program is in the table too.
  const auto own = reinterpret_cast<uint64_t>(&TableNamed);
  ASSERT_NE(snapshot->Find(own), nullptr);
  EXPECT_EQ(snapshot->Find(own)->status, ModuleTableStatus::kOk);
  // Nothing changed: the same snapshot, nothing compiled.
  EXPECT_EQ(tables.Refresh(), 0);
  EXPECT_EQ(tables.snapshot(), snapshot);
}

TEST(UnwindTables, ListsModulesFirstAndCompilesOnlyWhatIsWanted) {
  UnwindTables tables;
  EXPECT_TRUE(tables.Rescan());
  const UnwindSnapshot* listed = tables.snapshot();
  ASSERT_NE(listed, nullptr);
  const ModuleUnwindTable* libc = TableNamed(*listed, "libc.so");
  ASSERT_NE(libc, nullptr);
  EXPECT_EQ(libc->status, ModuleTableStatus::kPending);
  EXPECT_TRUE(libc->row_starts.empty());
  EXPECT_FALSE(tables.Rescan());  // the loader loaded nothing since
  EXPECT_EQ(tables.CompilePending(/*only_wanted=*/true), 0);
  EXPECT_EQ(tables.snapshot(), listed);

  libc->MarkWanted();
  EXPECT_EQ(tables.CompilePending(/*only_wanted=*/true), 1);
  const UnwindSnapshot* compiled = tables.snapshot();
  ASSERT_NE(compiled, listed);
  const auto qsort_pc = reinterpret_cast<uint64_t>(&qsort);
  ASSERT_NE(compiled->Find(qsort_pc), nullptr);
  EXPECT_EQ(compiled->Find(qsort_pc)->status, ModuleTableStatus::kOk);
  EXPECT_EQ(compiled->Find(qsort_pc)->Find(qsort_pc)->cfa, CfaKind::kRsp);
  // The old snapshot and its pending table are still readable (a walk may hold them).
  EXPECT_EQ(listed->Find(qsort_pc), libc);
  // Everything else is still pending; Refresh compiles it all, and a rescan keeps it.
  const auto own = reinterpret_cast<uint64_t>(&TableNamed);
  EXPECT_EQ(compiled->Find(own)->status, ModuleTableStatus::kPending);
  EXPECT_GT(tables.Refresh(), 0);
  EXPECT_EQ(tables.snapshot()->Find(own)->status, ModuleTableStatus::kOk);
  EXPECT_EQ(tables.snapshot()->Find(qsort_pc), compiled->Find(qsort_pc));  // not compiled again
  EXPECT_FALSE(tables.Rescan(/*force=*/true));
  // Compiling changes no layout: walks made before still hold.
  EXPECT_EQ(compiled->layout, listed->layout);
  EXPECT_EQ(tables.snapshot()->layout, listed->layout);
}

TEST(UnwindTables, TheLayoutChangesWhenAModuleLeavesOnly) {
  UnwindTables tables;
  tables.Refresh();
  const uint64_t before = tables.snapshot()->layout;
  void* library = dlopen("libresolv.so.2", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) GTEST_SKIP() << "no libresolv.so.2 to load: " << dlerror();
  EXPECT_TRUE(tables.Rescan());  // one more module: the same layout
  EXPECT_EQ(tables.snapshot()->layout, before);
  tables.CompilePending(/*only_wanted=*/false);
  EXPECT_EQ(tables.snapshot()->layout, before);
  if (dlclose(library) != 0 || dlopen("libresolv.so.2", RTLD_NOW | RTLD_NOLOAD) != nullptr) {
    GTEST_SKIP() << "libresolv.so.2 stays loaded";
  }
  EXPECT_TRUE(tables.Rescan());
  EXPECT_EQ(tables.snapshot()->layout, before + 1);
}

}  // namespace
}  // namespace gpuperf
