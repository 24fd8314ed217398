#include "cli/record_signals.h"

#include <gtest/gtest.h>

namespace gpuperf::cli {
namespace {

TEST(RecordSignalsTest, TheTerminalsForegroundJobSharesItsGroup) {
  // An interactive shell's job: record leads it, or (under `timeout`, a script) belongs to it.
  EXPECT_EQ(ChooseChildGroup(100, 100, 100), ChildGroup::kShared);
  EXPECT_EQ(ChooseChildGroup(100, 100, 120), ChildGroup::kShared);
}

TEST(RecordSignalsTest, AShellsBackgroundJobSharesItsGroup) {
  // `gpuperf record ... &` in an interactive shell: `fg` can make it the foreground job.
  EXPECT_EQ(ChooseChildGroup(100, 200, 200), ChildGroup::kShared);
}

TEST(RecordSignalsTest, ElsewhereTheProgramGetsAGroupOfItsOwn) {
  // A script's `timeout` (its own group, not the terminal's), a background script's child.
  EXPECT_EQ(ChooseChildGroup(100, 200, 210), ChildGroup::kOwn);
  // No terminal: setsid, a scheduler, a container, CI.
  EXPECT_EQ(ChooseChildGroup(-1, 200, 200), ChildGroup::kOwn);
  EXPECT_EQ(ChooseChildGroup(-1, 200, 210), ChildGroup::kOwn);
}

}  // namespace
}  // namespace gpuperf::cli
