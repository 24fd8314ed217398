#include "ebpf/proc_maps.h"

#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <cstring>

namespace gpuperf::ebpf {
namespace {

TEST(ProcMaps, ParsesLinesWithAndWithoutPaths) {
  MapsLine m;
  ASSERT_TRUE(ParseMapsLine(
      "7f1c2a000000-7f1c2a1d5000 r-xp 00028000 fe:01 1835053   /usr/lib/x86_64-linux-gnu/libc.so.6",
      &m));
  EXPECT_EQ(m.start, 0x7f1c2a000000u);
  EXPECT_EQ(m.end, 0x7f1c2a1d5000u);
  EXPECT_TRUE(m.executable);
  EXPECT_EQ(m.offset, 0x28000u);
  EXPECT_EQ(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  ASSERT_TRUE(ParseMapsLine("55d0c8a00000-55d0c8a21000 rw-p 00000000 00:00 0 ", &m));
  EXPECT_FALSE(m.executable);
  EXPECT_EQ(m.path, "");
  ASSERT_TRUE(ParseMapsLine("7ffd4b1f2000-7ffd4b1f4000 r-xp 00000000 00:00 0   [vdso]", &m));
  EXPECT_EQ(m.path, "[vdso]");
  ASSERT_TRUE(ParseMapsLine("7f00-7f10 r--p 0 08:01 5 /tmp/a file with spaces", &m));
  EXPECT_EQ(m.path, "/tmp/a file with spaces");
  EXPECT_FALSE(ParseMapsLine("not a maps line", &m));
  EXPECT_FALSE(ParseMapsLine("", &m));
}

TEST(ProcMaps, LoadBiasFollowsTheSegmentThatHoldsTheOffset) {
  ElfLayout layout;
  layout.is_elf = true;
  layout.loads = {{0, 0, 0x1000}, {0x1000, 0x1000, 0x5000}, {0x6d10, 0x7d10, 0x300}};
  uint64_t bias = 0;
  ASSERT_TRUE(LoadBias(layout, 0x7f0000000000, 0, &bias));
  EXPECT_EQ(bias, 0x7f0000000000u);
  ASSERT_TRUE(LoadBias(layout, 0x7f0000001000, 0x1000, &bias));
  EXPECT_EQ(bias, 0x7f0000000000u);
  // Data mapped from the page below its file offset, one page higher in memory.
  ASSERT_TRUE(LoadBias(layout, 0x7f0000007000, 0x6000, &bias));
  EXPECT_EQ(bias, 0x7f0000000000u);
  EXPECT_FALSE(LoadBias(layout, 0x7f0000009000, 0x9000, &bias));
}

struct SelfModule {
  uint64_t bias = 0;
  bool found = false;
};

// What the dynamic linker says about the test binary itself: the truth to compare with.
int FindSelf(dl_phdr_info* info, size_t, void* data) {
  auto* self = static_cast<SelfModule*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') {  // the main program
    self->bias = info->dlpi_addr;
    self->found = true;
    return 1;
  }
  return 0;
}

TEST(ProcMaps, ReadsThisProcessesModulesAsTheDynamicLinkerSeesThem) {
  std::map<std::string, ElfLayout> cache;
  const std::vector<MappedModule> modules = ReadProcessModules(getpid(), cache);
  SelfModule self;
  dl_iterate_phdr(FindSelf, &self);
  ASSERT_TRUE(self.found);
  char exe[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
  const uint64_t code = reinterpret_cast<uint64_t>(&FindSelf);
  bool matched = false;
  for (const MappedModule& m : modules) {
    if (m.path != exe) continue;
    matched = true;
    EXPECT_EQ(m.load_bias, self.bias);
    EXPECT_LE(m.start, code);
    EXPECT_GT(m.end, code);
    // Its code span holds its functions, and not all of it: the data is mapped apart.
    EXPECT_LE(m.code_start, code);
    EXPECT_GT(m.code_end, code);
    EXPECT_TRUE(m.code_start > m.start || m.code_end < m.end);
    EXPECT_EQ(m.build_id.size() % 2, 0u);
  }
  EXPECT_TRUE(matched) << "no module for " << exe;
  EXPECT_TRUE(cache.count(exe) == 1);
  EXPECT_TRUE(ReadProcessModules(0x7ffffff0, cache).empty());  // no such process
}

}  // namespace
}  // namespace gpuperf::ebpf
