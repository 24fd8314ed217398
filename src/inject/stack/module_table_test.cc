#include "inject/stack/module_table.h"

#include <dlfcn.h>
#include <elf.h>
#include <gnu/libc-version.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>

namespace gpuperf {
namespace {

__attribute__((noinline)) uint64_t AddressInThisBinary() {
  return reinterpret_cast<uint64_t>(&AddressInThisBinary);
}

std::string ExePath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, n) : "";
}

// The build-id as the file command-line tools see it, read from the ELF file on disk
// (section headers), independently of the in-memory program-header path under test.
std::string BuildIdOfFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return "?";
  std::string data;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) data.append(buf, n);
  std::fclose(f);
  Elf64_Ehdr eh;
  std::memcpy(&eh, data.data(), sizeof(eh));
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, data.data() + eh.e_shoff + i * eh.e_shentsize, sizeof(sh));
    if (sh.sh_type != SHT_NOTE) continue;
    std::string id =
        BuildIdFromNotes(data.data() + sh.sh_offset, sh.sh_size, sh.sh_addralign == 8 ? 8 : 4);
    if (!id.empty()) return id;
  }
  return "";
}

TEST(ModuleTable, FindsTheTestBinaryWithItsBuildId) {
  std::vector<LoadedModule> modules = EnumerateLoadedModules();
  ASSERT_GE(modules.size(), 3u);  // the program, libc, the loader at least
  const LoadedModule* self = FindModule(modules, AddressInThisBinary());
  ASSERT_NE(self, nullptr);
  EXPECT_EQ(self->path, ExePath());
  EXPECT_LE(self->start, AddressInThisBinary());
  EXPECT_GT(self->end, AddressInThisBinary());
  EXPECT_EQ(self->build_id, BuildIdOfFile(self->path));
  EXPECT_EQ(self->build_id.size(), 40u);  // GNU ld's default: sha1
  for (size_t i = 1; i < modules.size(); ++i) {
    EXPECT_LE(modules[i - 1].end, modules[i].start) << "overlap: " << modules[i].path;
  }
}

TEST(ModuleTable, FindsLibcAndTheLoadBiasMatchesDladdr) {
  std::vector<LoadedModule> modules = EnumerateLoadedModules();
  // A libc function no sanitizer intercepts.
  uint64_t pc = reinterpret_cast<uint64_t>(&gnu_get_libc_version);
  const LoadedModule* libc = FindModule(modules, pc);
  ASSERT_NE(libc, nullptr);
  EXPECT_NE(libc->path.find("libc.so"), std::string::npos) << libc->path;
  Dl_info info;
  ASSERT_NE(dladdr(reinterpret_cast<void*>(pc), &info), 0);
  // For a shared library the load bias is its base address.
  EXPECT_EQ(libc->load_bias, reinterpret_cast<uint64_t>(info.dli_fbase));
  EXPECT_EQ(libc->build_id, BuildIdOfFile(libc->path));
}

TEST(ModuleTable, PcsOutsideEveryModuleAreReported) {
  ModuleTable table;
  uint64_t inside = AddressInThisBinary();
  EXPECT_FALSE(table.Contains(inside));  // nothing known before the first refresh
  EXPECT_TRUE(table.Refresh());
  EXPECT_TRUE(table.Contains(inside));
  uint64_t heap = reinterpret_cast<uint64_t>(table.modules().data());  // a heap address
  EXPECT_FALSE(table.Contains(heap));
  uint64_t pcs[] = {inside, reinterpret_cast<uint64_t>(&std::qsort)};
  EXPECT_TRUE(table.ContainsAll(pcs, 2));
  pcs[1] = heap;
  EXPECT_FALSE(table.ContainsAll(pcs, 2));
  EXPECT_FALSE(table.Refresh());  // nothing loaded since: no change
  EXPECT_EQ(table.refreshes(), 1u);
}

TEST(ModuleTable, RefreshSeesALibraryLoadedLaterAndDrainHandsOutOnlyNewModules) {
  ModuleTable table;
  table.Refresh();
  std::vector<LoadedModule> first;
  table.DrainNew(first);
  EXPECT_EQ(first.size(), table.modules().size());
  std::vector<LoadedModule> again;
  table.DrainNew(again);
  EXPECT_TRUE(again.empty());

  // A library this test binary does not link: libz from the system (libdw pulls it in
  // statically, not as a shared object).
  void* handle = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) GTEST_SKIP() << "libz.so.1 not installed";
  void* symbol = dlsym(handle, "zlibVersion");
  ASSERT_NE(symbol, nullptr);
  uint64_t pc = reinterpret_cast<uint64_t>(symbol);
  if (table.Contains(pc)) {
    dlclose(handle);
    GTEST_SKIP() << "libz.so.1 was already loaded";
  }
  EXPECT_TRUE(table.Refresh());
  EXPECT_TRUE(table.Contains(pc));
  std::vector<LoadedModule> added;
  table.DrainNew(added);
  ASSERT_EQ(added.size(), 1u);
  EXPECT_NE(added[0].path.find("libz.so"), std::string::npos);
  dlclose(handle);
}

TEST(ModuleTable, ConvertsToRecordsThroughTheInterner) {
  std::vector<LoadedModule> modules = {{"/lib/a.so", "abcd", 0x1000, 0x1000, 0x3000},
                                       {"/lib/b.so", "", 0x8000, 0x8000, 0x9000}};
  std::map<std::string, StringId> ids;
  auto intern = [&](std::string_view s) {
    auto [it, added] = ids.emplace(std::string(s), static_cast<StringId>(ids.size() + 1));
    return it->second;
  };
  std::vector<ModuleRecord> records = ToModuleRecords(modules, 42, intern);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].pid, 42u);
  EXPECT_EQ(records[0].path, ids["/lib/a.so"]);
  EXPECT_EQ(records[0].build_id, ids["abcd"]);
  EXPECT_EQ(records[0].start, 0x1000u);
  EXPECT_EQ(records[0].end, 0x3000u);
  EXPECT_EQ(records[1].build_id, 0u);  // no build-id: id 0, not the empty string's id
}

TEST(ModuleTable, BuildIdNoteParsingSkipsOtherNotesAndSurvivesGarbage) {
  // Two notes: an ABI tag, then a build-id.
  std::vector<unsigned char> notes;
  auto put32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) notes.push_back(static_cast<unsigned char>(v >> (8 * i)));
  };
  put32(4), put32(16), put32(NT_GNU_ABI_TAG);
  for (char c : std::string("GNU", 4)) notes.push_back(c);
  for (int i = 0; i < 16; ++i) notes.push_back(0);
  put32(4), put32(3), put32(NT_GNU_BUILD_ID);
  for (char c : std::string("GNU", 4)) notes.push_back(c);
  notes.push_back(0xde), notes.push_back(0xad), notes.push_back(0x01), notes.push_back(0);
  EXPECT_EQ(BuildIdFromNotes(notes.data(), notes.size(), 4), "dead01");
  // Cut inside the descriptor: no id rather than a read past the end.
  EXPECT_EQ(BuildIdFromNotes(notes.data(), notes.size() - 3, 4), "");
  std::vector<unsigned char> garbage(64, 0xff);
  EXPECT_EQ(BuildIdFromNotes(garbage.data(), garbage.size(), 4), "");
}

TEST(ModuleTable, LookupsRunWhileAnotherThreadRefreshes) {
  ModuleTable table;
  table.Refresh();
  uint64_t pc = AddressInThisBinary();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> misses{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        const LoadedModule* m = table.Find(pc);
        if (m == nullptr || m->path.empty()) misses.fetch_add(1);
      }
    });
  }
  for (int i = 0; i < 20; ++i) {
    void* handle = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    table.Refresh();
    if (handle != nullptr) dlclose(handle);
    table.Refresh();
  }
  stop.store(true);
  for (auto& th : readers) th.join();
  EXPECT_EQ(misses.load(), 0u);
}

}  // namespace
}  // namespace gpuperf
