#include "analyze/symbols/cubin_lines.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "support/temp_dir.h"

namespace gpuperf {
namespace {

const std::string kCubin =
    std::string(GPUPERF_SOURCE_DIR) + "/tests/data/metrics/hw_bound.sm_90.cubin";
const std::string kHotLoop = "_Z15hot_loop_kernelPfPKfii";

std::vector<uint8_t> Bytes(const std::string& path) {
  const std::string text = testing::ReadFileToString(path);
  return {text.begin(), text.end()};
}

std::string Run(const std::string& command) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), pipe.get())) > 0;) out.append(buf, n);
  return out;
}

// binutils' own decoding of the same table: (address, line) rows of every sequence.
std::multiset<std::pair<uint64_t, uint32_t>> ReadelfRows(const std::string& cubin) {
  std::multiset<std::pair<uint64_t, uint32_t>> rows;
  std::istringstream in(Run("readelf --debug-dump=decodedline " + cubin + " 2>/dev/null"));
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string file, line_number, address;
    if (!(fields >> file >> line_number >> address) || file != "hw_bound.cu") continue;
    if (line_number == "-") continue;  // end of sequence
    rows.emplace(std::stoull(address, nullptr, 16), static_cast<uint32_t>(std::stoul(line_number)));
  }
  return rows;
}

TEST(CubinLines, AgreesWithReadelfOnEveryRow) {
  auto table = CubinLineTable::Parse(Bytes(kCubin));
  ASSERT_TRUE(table.ok()) << table.status().message();
  ASSERT_TRUE(table->HasLines());
  const auto expected = ReadelfRows(kCubin);
  if (expected.empty()) GTEST_SKIP() << "readelf is not installed";
  std::multiset<std::pair<uint64_t, uint32_t>> rows;
  for (const char* f : {"_Z11copy_kernelPK6float4PS_m", "_Z10fma_kernelPfi",
                        "_Z14latency_kernelPKjPji", "_Z15hot_loop_kernelPfPKfii"}) {
    ASSERT_TRUE(table->HasFunction(f)) << f;
    for (const SassLine& row : table->Rows(f)) rows.emplace(row.offset, row.line);
  }
  EXPECT_EQ(rows, expected);
}

TEST(CubinLines, FindsTheLineOfAnInstructionInsideItsFunction) {
  auto table = CubinLineTable::Parse(Bytes(kCubin));
  ASSERT_TRUE(table.ok());
  std::span<const SassLine> rows = table->Rows(kHotLoop);
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows.front().file, "/tmp/gpuperf-fixture/hw_bound.cu");
  // An offset between two rows takes the earlier row's line.
  const SassLine& second = rows[1];
  const SassLine* found = table->Find(kHotLoop, second.offset + 4);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->line, second.line);
  EXPECT_EQ(table->Find(kHotLoop, 1u << 30), nullptr);  // past the function's end
  EXPECT_EQ(table->Find("_Z7missingv", 0), nullptr);
}

TEST(CubinLines, WithoutALineTableThereAreNoLines) {
  // The same cubin with .debug_line renamed: what a build without -lineinfo looks like.
  std::vector<uint8_t> bytes = Bytes(kCubin);
  const std::string name = ".debug_line";
  for (size_t i = 0; i + name.size() < bytes.size(); ++i) {
    if (std::equal(name.begin(), name.end(), bytes.begin() + i) && bytes[i + name.size()] == 0) {
      bytes[i + 1] = 'X';
    }
  }
  auto table = CubinLineTable::Parse(bytes);
  ASSERT_TRUE(table.ok());
  EXPECT_FALSE(table->HasLines());
}

TEST(CubinLines, DamageIsAClearErrorNotACrash) {
  EXPECT_FALSE(CubinLineTable::Parse(std::vector<uint8_t>{1, 2, 3}).ok());
  std::vector<uint8_t> bytes = Bytes(kCubin);
  // Every prefix of the file: refused or parsed, never out of bounds.
  for (size_t cut = 0; cut < bytes.size(); cut += 97) {
    auto table = CubinLineTable::Parse(std::span<const uint8_t>(bytes.data(), cut));
    if (table.ok()) (void)table->HasLines();
  }
  // Garbage in the line program.
  for (size_t i = 0; i < bytes.size(); i += 13) bytes[i] ^= 0x5a;
  auto table = CubinLineTable::Parse(bytes);
  (void)table;
}

}  // namespace
}  // namespace gpuperf
