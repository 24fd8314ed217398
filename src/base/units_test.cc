#include "base/units.h"

#include <gtest/gtest.h>

namespace gpuperf {
namespace {

TEST(Units, Durations) {
  EXPECT_EQ(FormatDuration(0), "0 ns");
  EXPECT_EQ(FormatDuration(999), "999 ns");
  EXPECT_EQ(FormatDuration(1234), "1.23 µs");
  EXPECT_EQ(FormatDuration(45600), "45.6 µs");
  EXPECT_EQ(FormatDuration(4560000), "4.56 ms");
  EXPECT_EQ(FormatDuration(123000000000ull), "123 s");
}

TEST(Units, BytesRatesPercentCounts) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(3ull << 30), "3.00 GiB");
  EXPECT_EQ(FormatBandwidth(1000000000, 1000000000), "1.00 GB/s");
  EXPECT_EQ(FormatBandwidth(5000000, 1000000000), "5.00 MB/s");
  EXPECT_EQ(FormatBandwidth(1, 0), "-");
  EXPECT_EQ(FormatPercent(0.1234), "12.3%");
  EXPECT_EQ(FormatCount(1234567), "1,234,567");
  EXPECT_EQ(FormatCount(12), "12");
}

}  // namespace
}  // namespace gpuperf
