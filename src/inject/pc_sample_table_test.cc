#include "inject/pc_sample_table.h"

#include <gtest/gtest.h>

#include <map>

namespace gpuperf::inject {
namespace {

// Every string the table has interned so far, by id.
std::map<StringId, std::string> Strings(NameTable& names) {
  std::vector<std::pair<StringId, std::string>> all;
  names.DrainNew(all);
  return {all.begin(), all.end()};
}

TEST(PcSampleTable, SumsByInstructionAndStallThenStartsOver) {
  NameTable names;
  PcSampleTable table;
  table.SetStallName(3, "smsp__pcsamp_warps_issue_stalled_long_scoreboard");
  table.Add(0xabc, "_Z4loopv", 0x40, 0, 3, 10);
  table.Add(0xabc, "_Z4loopv", 0x40, 0, 3, 5);
  table.Add(0xabc, "_Z4loopv", 0x40, 0, 7, 2);  // a reason without a name
  table.Add(0xabc, "_Z4loopv", 0x50, 0, 3, 1);
  table.Add(0xdef, "_Z4loopv", 0x40, 0, 3, 0);  // nothing: no record
  std::vector<PcSampleRecord> out;
  EXPECT_EQ(table.Drain(42, names, out), 18u);
  std::map<StringId, std::string> strings = Strings(names);
  auto Name = [&strings](NameTable&, StringId id) { return strings[id]; };
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].pid, 42u);
  EXPECT_EQ(out[0].cubin_crc, 0xabcu);
  EXPECT_EQ(out[0].pc_offset, 0x40u);
  EXPECT_EQ(Name(names, out[0].function), "_Z4loopv");
  ASSERT_EQ(out[0].stalls.size(), 2u);
  EXPECT_EQ(Name(names, out[0].stalls[0].reason),
            "smsp__pcsamp_warps_issue_stalled_long_scoreboard");
  EXPECT_EQ(out[0].stalls[0].samples, 15u);
  EXPECT_EQ(Name(names, out[0].stalls[1].reason), "stall_7");
  EXPECT_EQ(out[1].pc_offset, 0x50u);
  EXPECT_TRUE(table.empty());
  out.clear();
  EXPECT_EQ(table.Drain(42, names, out), 0u);
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace gpuperf::inject
