#include "analyze/symbols/symbol_table.h"

#include <gtest/gtest.h>

namespace gpuperf {
namespace {

TEST(SymbolTable, ResolvesInlineChainsOutermostFirst) {
  std::vector<std::string> strings = {"", "inner", "outer", "a.cc", "/lib/libx.so", "main"};
  SymbolTable table(strings);
  table.AddModule(ModuleRecord{1, 4, 0, 0x1000, 0x1000, 0x5000});
  table.AddSymbol(SymbolRecord{1, 0x1234, {{1, 3, 10, 4, 0x234}, {2, 3, 20, 4, 0x234}}});
  table.AddSymbol(SymbolRecord{1, 0x2000, {{5, 3, 5, 4, 0x1000}}});
  std::vector<Frame> frames;
  table.ResolveStack(StackRecord{1, 1, {0x1234, 0x2000}}, frames);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].function, "main");
  EXPECT_EQ(frames[1].function, "outer");
  EXPECT_FALSE(frames[1].inlined);
  EXPECT_EQ(frames[2].function, "inner");
  EXPECT_TRUE(frames[2].inlined);
  EXPECT_EQ(frames[2].line, 10u);
  EXPECT_EQ(frames[2].file, "a.cc");
}

TEST(SymbolTable, UnresolvedPcsShowModuleAndOffset) {
  std::vector<std::string> strings = {"", "/usr/lib/libcuda.so.1"};
  SymbolTable table(strings);
  table.AddModule(ModuleRecord{7, 1, 0, 0x7f0000000000, 0x7f0000000000, 0x7f0000100000});
  std::vector<Frame> frames;
  table.Resolve(7, 0x7f0000001234, frames);
  table.Resolve(7, 0x10, frames);
  table.Resolve(8, 0x7f0000001234, frames);  // another process: no module
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0].function, "libcuda.so.1+0x1234");
  EXPECT_EQ(frames[0].module, "libcuda.so.1");
  EXPECT_EQ(frames[1].function, "0x10");
  EXPECT_EQ(frames[2].function, "0x7f0000001234");
}

}  // namespace
}  // namespace gpuperf
