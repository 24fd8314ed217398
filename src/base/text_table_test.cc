#include "base/text_table.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace gpuperf {
namespace {

TextTable KernelLikeTable() {
  TextTable t;
  t.AddColumn("Time");
  t.AddColumn("Calls");
  t.AddColumn("Kernel", TextTable::Align::kLeft);
  t.AddRow({"12.5 ms", "1,024",
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"});
  t.AddRow({"3.25 ms", "7", "short_kernel"});
  return t;
}

std::vector<std::string> Lines(const TextTable& t) {
  std::ostringstream out;
  t.Render(out);
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(TextTable, WithoutALimitNamesStayWhole) {
  std::vector<std::string> lines = Lines(KernelLikeTable());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[2].find("FillFunctor<float>>"), std::string::npos);
  EXPECT_GT(DisplayWidth(lines[2]), 90u);
}

// A cell, a note and a cut name are bytes a recorded program chose: none breaks a line or
// reaches the terminal as a control character (base/text_escape.h's display form).
TEST(TextTable, CellsNotesAndCutNamesAreEscaped) {
  const std::string name = "caf\xe9 \x1b]0;title\x07\n!! DATA LOSS \x1b[2J";
  const std::string shown = "caf\\xe9 \\x1b]0;title\\x07\\x0a!! DATA LOSS \\x1b[2J";
  TextTable t;
  t.AddColumn("Calls");
  t.AddColumn("Kernel", TextTable::Align::kLeft);
  t.AddRow({"7", name});
  std::vector<std::string> lines = Lines(t);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "      7  " + shown);
  std::ostringstream note;
  WriteNote(note, "most often " + name);
  EXPECT_EQ(note.str(), "  most often " + shown + "\n");
  EXPECT_EQ(Ellipsize(name, 12), "caf\\xe9 \\x1…");
  EXPECT_EQ(Ellipsize(name, 0), shown);
}

TEST(TextTable, ALimitCutsNamesButNotNumbers) {
  TextTable t = KernelLikeTable();
  t.set_max_width(50);
  std::vector<std::string> lines = Lines(t);
  ASSERT_EQ(lines.size(), 4u);
  for (const std::string& line : lines) EXPECT_LE(DisplayWidth(line), 50u) << line;
  EXPECT_EQ(DisplayWidth(lines[2]), 50u);  // the long name takes all the room left
  EXPECT_EQ(lines[2].find("  12.5 ms  1,024  void at::native::"), 0u) << lines[2];
  EXPECT_TRUE(lines[2].ends_with("…")) << lines[2];
  EXPECT_TRUE(lines[3].ends_with("short_kernel")) << lines[3];
}

TEST(TextTable, FollowsTheStreamsWidth) {
  std::ostringstream out;
  SetTableWidth(out, 60);
  KernelLikeTable().Render(out);
  std::istringstream in(out.str());
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) EXPECT_LE(DisplayWidth(line), 60u);
  EXPECT_EQ(lines, 4);
  EXPECT_NE(out.str().find("…"), std::string::npos);
}

TEST(TextTable, NamesAreNotCutBelowTheirMinimum) {
  TextTable t = KernelLikeTable();
  t.set_max_width(10);  // cannot be met: names keep kMinNameWidth, numbers stay whole
  std::vector<std::string> lines = Lines(t);
  EXPECT_NE(lines[2].find("12.5 ms  1,024"), std::string::npos);
  EXPECT_EQ(DisplayWidth(lines[2]), 2 + 7 + 2 + 5 + 2 + TextTable::kMinNameWidth);
}

TEST(TextTable, ColumnsWithADropOrderGoOnceNamesAreAtTheirMinimum) {
  TextTable t;
  t.AddColumn("Time");
  t.AddColumn("Min", TextTable::Align::kRight, 1);
  t.AddColumn("Regs", TextTable::Align::kRight, 2);
  t.AddColumn("Name", TextTable::Align::kLeft);
  t.AddRow({"12.5 ms", "11.0 ms", "40", "a_kernel_with_a_rather_long_name"});
  t.set_max_width(2 + 7 + 2 + 7 + 2 + TextTable::kMinNameWidth);  // no room for Regs
  std::vector<std::string> lines = Lines(t);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "     Time      Min  Name");
  EXPECT_EQ(lines[2], "  12.5 ms  11.0 ms  a_kernel_wi…");
  t.set_max_width(30);  // Min goes too; the name gets the room back
  lines = Lines(t);
  EXPECT_EQ(lines[0], "     Time  Name");
  EXPECT_EQ(lines[2], "  12.5 ms  a_kernel_with_a_ra…");
}

TEST(WriteNote, OneLineWithoutALimitWrappedAtSpacesWithOne) {
  const std::string note = "Grid/Block: the most frequent launch configuration; Occ: its occupancy";
  std::ostringstream plain;
  WriteNote(plain, note);
  EXPECT_EQ(plain.str(), "  " + note + "\n");
  std::ostringstream narrow;
  SetTableWidth(narrow, 30);
  WriteNote(narrow, note);
  EXPECT_EQ(narrow.str(),
            "  Grid/Block: the most\n  frequent launch\n  configuration; Occ: its\n"
            "  occupancy\n");
}

TEST(TerminalWidth, ZeroForAPipeTheTerminalsWidthOrColumnsForATerminal) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  EXPECT_EQ(TerminalWidth(pipe_fds[1]), 0u);
  close(pipe_fds[0]);
  close(pipe_fds[1]);

  int master = posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0) GTEST_SKIP() << "no pseudo-terminals here";
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  int terminal = open(ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(terminal, 0);
  struct winsize size {};
  size.ws_col = 100;
  size.ws_row = 30;
  ASSERT_EQ(ioctl(terminal, TIOCSWINSZ, &size), 0);
  const char* saved = std::getenv("COLUMNS");
  std::string saved_value = saved ? saved : "";
  unsetenv("COLUMNS");
  EXPECT_EQ(TerminalWidth(terminal), 100u);
  setenv("COLUMNS", "72", 1);
  EXPECT_EQ(TerminalWidth(terminal), 72u);
  setenv("COLUMNS", "wide", 1);
  EXPECT_EQ(TerminalWidth(terminal), 100u);
  if (saved) {
    setenv("COLUMNS", saved_value.c_str(), 1);
  } else {
    unsetenv("COLUMNS");
  }
  close(terminal);
  close(master);
}

}  // namespace
}  // namespace gpuperf
