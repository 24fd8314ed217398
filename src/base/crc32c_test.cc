#include "base/crc32c.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuperf {
namespace {

TEST(Crc32cTest, CheckValueOfTheCastagnoliPolynomial) {
  // The check value every CRC-32C implementation agrees on (RFC 3720, iSCSI).
  const std::string digits = "123456789";
  EXPECT_EQ(Crc32c(0, digits.data(), digits.size()), 0xE3069283u);
  EXPECT_EQ(Crc32cPortable(0, digits.data(), digits.size()), 0xE3069283u);
}

TEST(Crc32cTest, InstructionAndTablesAgreeOnEveryLengthAndAlignment) {
  std::vector<uint8_t> bytes(300);
  uint64_t state = 7;
  for (uint8_t& b : bytes) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    b = static_cast<uint8_t>(state >> 56);
  }
  for (size_t start = 0; start < 9; ++start) {
    for (size_t size = 0; start + size <= bytes.size(); size += 1 + size / 8) {
      ASSERT_EQ(Crc32c(0, bytes.data() + start, size),
                Crc32cPortable(0, bytes.data() + start, size))
          << "start " << start << " size " << size;
    }
  }
}

TEST(Crc32cTest, ARunningChecksumContinuesAcrossPieces) {
  // The reader checks a chunk's header and payload as two pieces.
  std::vector<uint8_t> bytes(100);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 37);
  const uint32_t whole = Crc32c(0, bytes.data(), bytes.size());
  for (size_t split = 0; split <= bytes.size(); split += 7) {
    EXPECT_EQ(Crc32c(Crc32c(0, bytes.data(), split), bytes.data() + split, bytes.size() - split),
              whole);
  }
}

}  // namespace
}  // namespace gpuperf
