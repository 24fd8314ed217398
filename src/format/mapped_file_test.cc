// A mapped trace lets go of the pages the reader is done with, and still reads the same
// bytes there afterwards.
#include "format/mapped_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "support/temp_dir.h"

namespace gpuperf::format {
namespace {

using testing::TempDir;
using testing::WriteStringToFile;

// Resident kilobytes of the mapping that starts at `start` (/proc/self/smaps), -1 if none.
long ResidentKb(const void* start) {
  std::ifstream smaps("/proc/self/smaps");
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "%lx-", reinterpret_cast<unsigned long>(start));
  bool in_mapping = false;
  for (std::string line; std::getline(smaps, line);) {
    if (line.find('-') != std::string::npos && line.find(' ') > line.find('-') &&
        line.find("kB") == std::string::npos) {
      in_mapping = line.rfind(prefix, 0) == 0;
    } else if (in_mapping && line.rfind("Rss:", 0) == 0) {
      std::istringstream fields(line.substr(4));
      long kb = -1;
      fields >> kb;
      return kb;
    }
  }
  return -1;
}

uint64_t Sum(std::span<const uint8_t> bytes) {
  uint64_t sum = 0;
  for (size_t i = 0; i < bytes.size(); i += 512) sum += bytes[i] * (i / 512 + 1);
  return sum;
}

TEST(MappedFile, ReleasedPagesLeaveResidentMemoryAndReadTheSame) {
  constexpr size_t kMiB = 1 << 20;
  TempDir dir;
  std::string data(24 * kMiB, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + i / 4096);
  const std::string path = dir.File("trace.gpt");
  WriteStringToFile(path, data);

  MappedFile file;
  ASSERT_TRUE(file.Open(path).ok());
  const uint64_t sum = Sum(file.bytes());  // touches every page
  EXPECT_GE(ResidentKb(file.bytes().data()), 24 * 1024);

  file.ReleaseBefore(1 * kMiB);  // less than a step: kept
  EXPECT_GE(ResidentKb(file.bytes().data()), 24 * 1024);

  file.ReleaseBefore(20 * kMiB + 100);
  EXPECT_LE(ResidentKb(file.bytes().data()), 4 * 1024 + 4);

  EXPECT_EQ(Sum(file.bytes()), sum) << "released pages read the file's bytes again";
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(file.bytes().data()), data.size()), data);
}

}  // namespace
}  // namespace gpuperf::format
