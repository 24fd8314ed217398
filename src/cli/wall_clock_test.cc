#include "cli/wall_clock.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace gpuperf::cli {
namespace {

constexpr uint64_t kSecond = 1'000'000'000ull;
// 2026-03-01T12:00:00Z
constexpr uint64_t kNow = 1772366400ull * kSecond;

// The time TEXT means, or 0 when it is refused.
uint64_t At(const char* text) {
  Result<uint64_t> at = ParseWallClock(text, kNow);
  return at.ok() ? at.value() : 0;
}

class WallClockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    saved_ = tz != nullptr ? tz : "";
    had_ = tz != nullptr;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    if (had_) {
      setenv("TZ", saved_.c_str(), 1);
    } else {
      unsetenv("TZ");
    }
    tzset();
  }
  std::string saved_;
  bool had_ = false;
};

TEST_F(WallClockTest, EveryFormItTakes) {
  EXPECT_EQ(At("+10s"), kNow + 10 * kSecond);
  EXPECT_EQ(At("+1.5m"), kNow + 90 * kSecond);
  EXPECT_EQ(At("@1772366460"), kNow + 60 * kSecond);
  EXPECT_EQ(At("@1772366460.25"), kNow + 60 * kSecond + kSecond / 4);
  EXPECT_EQ(At("12:30"), kNow + 1800 * kSecond);
  EXPECT_EQ(At("12:00:05.5"), kNow + 5 * kSecond + kSecond / 2);
  EXPECT_EQ(At("2026-03-01T13:00:00Z"), kNow + 3600 * kSecond);
  EXPECT_EQ(At("2026-03-01 13:00"), kNow + 3600 * kSecond);
}

TEST_F(WallClockTest, ThePastAndWhatIsNoTime) {
  EXPECT_TRUE(ParseWallClock("11:59:59.5", kNow).ok());  // within the second of slack
  const Result<uint64_t> past = ParseWallClock("11:00", kNow);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.status().message().find("3600 s in the past"), std::string::npos);
  for (const char* bad : {"", "noon", "25:00", "12:61", "12:00:00.1234567890", "@-5", "@12x",
                          "2026-13-01T00:00", "2026-03-01X12:00", "+", "+ten"}) {
    const Result<uint64_t> at = ParseWallClock(bad, kNow);
    EXPECT_FALSE(at.ok()) << bad;
  }
  const Result<uint64_t> junk = ParseWallClock("noon", kNow);
  EXPECT_NE(junk.status().message().find("--at: \"noon\" is not a time"), std::string::npos);
}

}  // namespace
}  // namespace gpuperf::cli
