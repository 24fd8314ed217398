#include "cpython/python_lines.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace gpuperf {
namespace {

int Line310(int first_line, const std::vector<uint8_t>& table, uint32_t unit) {
  return ResolvePythonLine(PyLineTableFormat::kLineTable310, first_line, table, unit);
}
int Line311(int first_line, const std::vector<uint8_t>& table, uint32_t unit) {
  return ResolvePythonLine(PyLineTableFormat::kLocations311, first_line, table, unit);
}

TEST(PythonLines, Format310PairsOfByteAndLineDeltas) {
  // (bytes covered, signed line delta): [0,6) +0, [6,10) +1, empty +2, [10,14) +1,
  // [14,16) no line (-128), [16,18) -3.
  std::vector<uint8_t> table = {6, 0, 4, 1, 0, 2, 4, 1, 2, 0x80, 2, uint8_t(-3)};
  std::vector<int> expected = {10, 10, 10, 11, 11, 14, 14, 0, 11};
  for (uint32_t unit = 0; unit < expected.size(); ++unit) {
    EXPECT_EQ(Line310(10, table, unit), expected[unit]) << "unit " << unit;
  }
  EXPECT_EQ(Line310(10, table, 9), 0) << "past the table";
  EXPECT_EQ(Line310(10, table, kPyNoInstruction), 10) << "a frame that had not started";
}

TEST(PythonLines, Format310TableFromCPython310) {
  // co_linetable and co_lines() of a 14-line function (firstlineno 2) under CPython 3.10.13,
  // ranges in code units.
  std::vector<uint8_t> table = {4, 1, 12, 1,   8,  1,   10, 1, 10, 3, 2, 1, 10, 1,   2, 3,
                                2, 1, 4,  255, 12, 254, 6,  1, 2,  1, 2, 1, 4,  255, 2, 254};
  struct Range {
    uint32_t start, end;
    int line;
  };
  std::vector<Range> co_lines = {{0, 2, 3},    {2, 8, 4},    {8, 12, 5},   {12, 17, 6},
                                 {17, 22, 9},  {22, 23, 10}, {23, 28, 11}, {28, 29, 14},
                                 {29, 30, 15}, {30, 32, 14}, {32, 38, 12}, {38, 41, 13},
                                 {41, 42, 14}, {42, 43, 15}, {43, 45, 14}, {45, 46, 12}};
  for (const Range& range : co_lines) {
    for (uint32_t unit = range.start; unit < range.end; ++unit) {
      EXPECT_EQ(Line310(2, table, unit), range.line) << "unit " << unit;
    }
  }
}

TEST(PythonLines, Format311EveryEntryKind) {
  std::vector<uint8_t> table = {
      0xE8, 0x02,                    // no-columns form, 1 unit, line +1 (zigzag 2)
      0x82, 0x05,                    // short form (kind 0), 3 units, same line
      0xD9, 0x04, 0x09,              // one-line form, kind 11 = +1, 2 units
      0xF8,                          // no location, 1 unit
      0xF1, 0x07, 0x00, 0x01, 0x05,  // long form, 2 units, line -3 (zigzag 7)
      0xE8, 0x48, 0x03,              // no-columns form, line +100 (zigzag 200 = 8 | 3 << 6)
  };
  std::vector<int> expected = {6, 6, 6, 6, 7, 7, 0, 4, 4, 104};
  for (uint32_t unit = 0; unit < expected.size(); ++unit) {
    EXPECT_EQ(Line311(5, table, unit), expected[unit]) << "unit " << unit;
  }
  EXPECT_EQ(Line311(5, table, 10), 0) << "past the table";
  EXPECT_EQ(Line311(5, table, kPyNoInstruction), 5);
}

TEST(PythonLines, NoTableMeansUnknownLines) {
  PyCodeInfo code;
  code.first_line = 7;
  EXPECT_EQ(ResolvePythonLine(code, 0), 0);
  EXPECT_EQ(ResolvePythonLine(code, kPyNoInstruction), 7);
  code.line_format = PyLineTableFormat::kLocations311;
  code.line_table = std::string("\xE8\x02", 2);
  EXPECT_EQ(ResolvePythonLine(code, 0), 8);
}

TEST(PythonLines, TablesCutShortStayInBounds) {
  // A varint whose continuation bit runs into the end of the table, and an odd-length
  // 3.10 table: the decoders stop at the end.
  std::vector<uint8_t> cut = {0xE8, 0x48};
  EXPECT_EQ(Line311(5, cut, 0), 9);  // +4 from the bits that are there
  EXPECT_EQ(Line311(5, cut, 1), 0);
  std::vector<uint8_t> odd = {2, 1, 2};
  EXPECT_EQ(Line310(5, odd, 0), 6);
  EXPECT_EQ(Line310(5, odd, 1), 0);
  // Leading bytes without the entry bit are skipped, as CPython's reader does.
  std::vector<uint8_t> junk_first = {0x01, 0x02, 0xE8, 0x02};
  EXPECT_EQ(Line311(5, junk_first, 0), 6);
}

TEST(PythonLines, RandomTablesNeverGoNegativeOrCrash) {
  std::mt19937 rng(12);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> table(rng() % 40);
    for (uint8_t& byte : table) byte = uint8_t(rng());
    int first_line = int(rng() % 200) - 100;
    for (uint32_t unit : {0u, 1u, 7u, 100u, 0x7fffffffu}) {
      EXPECT_GE(Line311(first_line, table, unit), 0);
      EXPECT_GE(Line310(first_line, table, unit), 0);
    }
  }
}

}  // namespace
}  // namespace gpuperf
