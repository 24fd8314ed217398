#include "cli/command_names.h"

#include <gtest/gtest.h>

namespace gpuperf::cli {
namespace {

const std::vector<std::string> kCommands = {"record", "report",    "flamegraph", "export",
                                            "diff",   "symbolize", "dump"};

TEST(CloseCommandNamesTest, TyposAndPrefixesFindTheCommand) {
  EXPECT_EQ(CloseCommandNames("reprot", kCommands), std::vector<std::string>{"report"});
  EXPECT_EQ(CloseCommandNames("exprot", kCommands), std::vector<std::string>{"export"});
  EXPECT_EQ(CloseCommandNames("flamegrap", kCommands), std::vector<std::string>{"flamegraph"});
  EXPECT_EQ(CloseCommandNames("dupm", kCommands), std::vector<std::string>{"dump"});
  EXPECT_EQ(CloseCommandNames("sym", kCommands), std::vector<std::string>{"symbolize"});
}

TEST(CloseCommandNamesTest, TiesKeepEveryCandidate) {
  EXPECT_EQ(CloseCommandNames("re", kCommands), (std::vector<std::string>{"record", "report"}));
}

TEST(CloseCommandNamesTest, FarWordsSuggestNothing) {
  EXPECT_TRUE(CloseCommandNames("frobnicate", kCommands).empty());
  EXPECT_TRUE(CloseCommandNames("x", kCommands).empty());
  EXPECT_TRUE(CloseCommandNames("stat", kCommands).empty());
}

TEST(UnknownCommandMessageTest, NamesTheWordTheGuessAndTheList) {
  EXPECT_EQ(UnknownCommandMessage("reprot", {"report", "dump"}),
            "unknown command 'reprot': did you mean 'report'? (commands: report, dump)");
  EXPECT_EQ(UnknownCommandMessage("zzz", {"report", "dump"}),
            "unknown command 'zzz' (commands: report, dump)");
}

}  // namespace
}  // namespace gpuperf::cli
