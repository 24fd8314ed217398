#include "base/quantity.h"

#include <gtest/gtest.h>

#include <clocale>

namespace gpuperf {
namespace {

constexpr DurationSpec kSeconds{kNsPerSecond, 0, kMaxDurationNs};  // record --delay
constexpr DurationSpec kNeedsUnit{};                               // report --from

std::string Message(const Status& status) {
  return status.message();
}

// The value of a parse that must succeed.
template <class T>
T Ok(Result<T> result) {
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? *result : T{};
}

TEST(Quantity, DurationsInEveryForm) {
  struct Case {
    const char* text;
    uint64_t ns;
  } cases[] = {
      {"2.5", 2'500'000'000},
      {"500ms", 500'000'000},
      {"1.5s", 1'500'000'000},
      {"2m", 120 * kNsPerSecond},
      {"2min", 120 * kNsPerSecond},
      {"1h", kNsPerHour},
      {"1e3", 1000 * kNsPerSecond},
      {"2.5e-1s", 250'000'000},
      {"10 s", 10 * kNsPerSecond},
      {"10   ms", 10'000'000},
      {"3us", 3000},
      {"3µs", 3000},
      {"7ns", 7},
      {"0", 0},
      {".5s", 500'000'000},
      {"5.", 5 * kNsPerSecond},
      {"1E2ms", 100'000'000},
      {"0.1s", 100'000'000},
  };
  for (const Case& c : cases) {
    auto ns = ParseDurationNs("--delay", c.text, kSeconds);
    ASSERT_TRUE(ns.ok()) << c.text << ": " << Message(ns.status());
    EXPECT_EQ(*ns, c.ns) << c.text;
  }
}

TEST(Quantity, NonsenseIsNotADurationAndSaysWhatIs) {
  for (const char* text :
       {"nan",  "inf", "-nan", "NaN", "infinity", "",  " 2", "2s ", "2 s ",  "2ss", "2 parsecs",
        "0x10", "+2",  "1e",   "1e+", "2s5",      ".", "e3", "1,5", "2.5.1", "１"}) {
    auto ns = ParseDurationNs("--delay", text, kSeconds);
    ASSERT_FALSE(ns.ok()) << text;
    EXPECT_EQ(ns.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(Message(ns.status()), std::string("--delay: \"") + text +
                                        "\" is not a duration; use e.g. 2.5, 500ms, 1.5s, 2m")
        << text;
  }
}

TEST(Quantity, NegativeAndHugeDurationsAreOutOfRangeWithTheMaximum) {
  const std::string range = "; use 0 to 1000000h";
  for (const char* text : {"-1", "-0.5s", "1e30", "1e300", "1e999", "1000001h",
                           "99999999999999999999999999", "18446744073709551616ns"}) {
    auto ns = ParseDurationNs("--delay", text, kSeconds);
    ASSERT_FALSE(ns.ok()) << text;
    EXPECT_EQ(Message(ns.status()),
              std::string("--delay: \"") + text + "\" is out of range" + range);
  }
  // The maximum itself is taken, and fits twice over in a 64-bit nanosecond clock.
  auto max = ParseDurationNs("--delay", "1000000h", kSeconds);
  ASSERT_TRUE(max.ok());
  EXPECT_EQ(*max, kMaxDurationNs);
  EXPECT_LT(2 * kMaxDurationNs, UINT64_MAX / 2);
  // A tiny number reads as 0, which this option takes.
  EXPECT_EQ(Ok(ParseDurationNs("--delay", "1e-999", kSeconds)), 0u);
}

TEST(Quantity, DurationRangesAndBareUnits) {
  const DurationSpec flush{kNsPerMs, 10 * kNsPerMs, 600'000 * kNsPerMs};  // --flush-period
  EXPECT_EQ(Ok(ParseDurationNs("", "250", flush)), 250 * kNsPerMs);
  EXPECT_EQ(Ok(ParseDurationNs("", "2s", flush)), 2 * kNsPerSecond);
  EXPECT_EQ(Message(ParseDurationNs("--flush-period", "5", flush).status()),
            "--flush-period: \"5\" is out of range; use 10ms to 10m");
  EXPECT_EQ(Message(ParseDurationNs("--flush-period", "soon", flush).status()),
            "--flush-period: \"soon\" is not a duration; use e.g. 200 (ms), 500ms, 1.5s, 2m");
  // No name: CLI11 puts the option's own in front.
  EXPECT_EQ(Message(ParseDurationNs("", "x", flush).status()),
            "\"x\" is not a duration; use e.g. 200 (ms), 500ms, 1.5s, 2m");
  // Where a bare number could mean anything, a unit is needed (0 is 0 in every unit).
  EXPECT_EQ(Message(ParseDurationNs("--from", "5", kNeedsUnit).status()),
            "--from: \"5\" needs a unit; use e.g. 500us, 1.5ms, 2s, 2m");
  EXPECT_EQ(Ok(ParseDurationNs("--from", "0", kNeedsUnit)), 0u);
  EXPECT_EQ(Ok(ParseDurationNs("--from", "1e3 ms", kNeedsUnit)), kNsPerSecond);
}

TEST(Quantity, SizesInEveryForm) {
  const SizeSpec mib{1 << 20, 4 << 20, uint64_t{1} << 36};  // --max-memory
  EXPECT_EQ(Ok(ParseBytes("", "64", mib)), uint64_t{64} << 20);
  EXPECT_EQ(Ok(ParseBytes("", "64 MiB", mib)), uint64_t{64} << 20);
  EXPECT_EQ(Ok(ParseBytes("", "1.5GiB", mib)), uint64_t{1536} << 20);
  EXPECT_EQ(Ok(ParseBytes("", "1e2MB", mib)), 100'000'000u);
  EXPECT_EQ(Ok(ParseBytes("", "64GiB", mib)), uint64_t{64} << 30);
  EXPECT_EQ(Message(ParseBytes("--max-memory", "65GiB", mib).status()),
            "--max-memory: \"65GiB\" is out of range; use 4MiB to 64GiB");
  EXPECT_EQ(Message(ParseBytes("--max-memory", "17592186044416", mib).status()),
            "--max-memory: \"17592186044416\" is out of range; use 4MiB to 64GiB");
  EXPECT_EQ(Message(ParseBytes("--max-memory", "-64", mib).status()),
            "--max-memory: \"-64\" is out of range; use 4MiB to 64GiB");
  for (const char* text : {"nan", "inf", "64 mib", "64M", "64MiB!", "lots"}) {
    EXPECT_EQ(Message(ParseBytes("--max-memory", text, mib).status()),
              std::string("--max-memory: \"") + text +
                  "\" is not a size; use e.g. 64 (MiB), 512KiB, 1.5GiB")
        << text;
  }
  EXPECT_EQ(Ok(ParseBytes("", "4096", SizeSpec{})), 4096u);
}

TEST(Quantity, WholeNumbers) {
  const CountSpec depth{1, 256};
  EXPECT_EQ(Ok(ParseCount("", "64", depth)), 64u);
  EXPECT_EQ(Ok(ParseCount("", "1e2", depth)), 100u);
  EXPECT_EQ(Ok(ParseCount("", "2.56e2", depth)), 256u);
  EXPECT_EQ(Ok(ParseCount("", "12.0", depth)), 12u);
  EXPECT_EQ(Message(ParseCount("--stack-depth", "2.5", depth).status()),
            "--stack-depth: \"2.5\" is not a whole number; use 1 to 256");
  EXPECT_EQ(Message(ParseCount("--stack-depth", "300", depth).status()),
            "--stack-depth: \"300\" is out of range; use 1 to 256");
  EXPECT_EQ(Message(ParseCount("--stack-depth", "0", depth).status()),
            "--stack-depth: \"0\" is out of range; use 1 to 256");
  EXPECT_EQ(Message(ParseCount("--stack-depth", "-3", depth).status()),
            "--stack-depth: \"-3\" is out of range; use 1 to 256");
  for (const char* text : {"nan", "inf", "0x10", "64 frames", "sixty", "1e999"}) {
    EXPECT_FALSE(ParseCount("", text, depth).ok()) << text;
  }
  // Exact to the last digit: no detour through a double for plain digits.
  const CountSpec any{0, UINT64_MAX};
  EXPECT_EQ(Ok(ParseCount("", "18446744073709551615", any)), UINT64_MAX);
  EXPECT_EQ(Ok(ParseCount("", "9007199254740993", any)), 9007199254740993u);
  EXPECT_EQ(Message(ParseCount("", "18446744073709551616", any).status()),
            "\"18446744073709551616\" is out of range; use 0 to 18446744073709551615");
  // A unit the option names may follow.
  const CountSpec rate{1, 1'000'000, "/s"};
  EXPECT_EQ(Ok(ParseCount("", "100/s", rate)), 100u);
  EXPECT_EQ(Ok(ParseCount("", "100 /s", rate)), 100u);
  EXPECT_EQ(Ok(ParseCount("", "1e3", rate)), 1000u);
  EXPECT_EQ(Message(ParseCount("--sample-launches", "fast", rate).status()),
            "--sample-launches: \"fast\" is not a whole number; use 1 to 1000000 (e.g. 100/s)");
  EXPECT_FALSE(ParseCount("", "100/m", rate).ok());
}

TEST(Quantity, HugeTopMeansAll) {
  const CountSpec top{0, UINT32_MAX, "", true};
  EXPECT_EQ(Ok(ParseCount("", "10", top)), 10u);
  EXPECT_EQ(Ok(ParseCount("", "0", top)), 0u);
  for (const char* huge :
       {"4294967296", "4294967297", "99999999999999999999999", "1e30", "1e999"}) {
    auto rows = ParseCount("--top", huge, top);
    ASSERT_TRUE(rows.ok()) << huge;
    EXPECT_EQ(*rows, 0u) << huge;  // 0: every row
  }
  EXPECT_EQ(Message(ParseCount("--top", "-5", top).status()),
            "--top: \"-5\" is out of range; use 0 or more (0: all)");
  EXPECT_EQ(Message(ParseCount("--top", "nan", top).status()),
            "--top: \"nan\" is not a whole number; use 0 or more (0: all)");
}

TEST(Quantity, Percentages) {
  const PercentSpec width{0, 50};
  EXPECT_DOUBLE_EQ(Ok(ParsePercent("", "0.5", width)), 0.5);
  EXPECT_DOUBLE_EQ(Ok(ParsePercent("", "0.5%", width)), 0.5);
  EXPECT_DOUBLE_EQ(Ok(ParsePercent("", "5e-2 %", width)), 0.05);
  EXPECT_EQ(Message(ParsePercent("--min-width", "nan", width).status()),
            "--min-width: \"nan\" is not a percentage; use 0 to 50 (e.g. 0.5 or 0.5%)");
  EXPECT_EQ(Message(ParsePercent("--min-width", "60", width).status()),
            "--min-width: \"60\" is out of range; use 0 to 50");
  EXPECT_EQ(Message(ParsePercent("--min-width", "-1", width).status()),
            "--min-width: \"-1\" is out of range; use 0 to 50");
}

TEST(Quantity, ALocaleWithADecimalCommaChangesNothing) {
  // The injection library runs inside programs that may set any locale.
  const char* set = std::setlocale(LC_NUMERIC, "de_DE.UTF-8");
  if (set == nullptr) set = std::setlocale(LC_NUMERIC, "fr_FR.UTF-8");
  EXPECT_EQ(Ok(ParseDurationNs("", "2.5", kSeconds)), 2'500'000'000u);
  EXPECT_FALSE(ParseDurationNs("", "2,5", kSeconds).ok());
  std::setlocale(LC_NUMERIC, "C");
}

TEST(Quantity, SplitNumberKeepsWhatFollows) {
  double number = 0;
  std::string_view unit;
  ASSERT_TRUE(SplitNumber("10 %", &number, &unit));
  EXPECT_EQ(number, 10);
  EXPECT_EQ(unit, "%");
  ASSERT_TRUE(SplitNumber("1e3ms", &number, &unit));
  EXPECT_EQ(number, 1000);
  EXPECT_EQ(unit, "ms");
  EXPECT_FALSE(SplitNumber("10 ", &number, &unit));  // a space and nothing: junk
  EXPECT_FALSE(SplitNumber("-1", &number, &unit));
  EXPECT_FALSE(SplitNumber("nan", &number, &unit));
}

TEST(Quantity, BoundsAsMessagesShowThem) {
  EXPECT_EQ(DurationText(0), "0");
  EXPECT_EQ(DurationText(100 * kNsPerMs), "100ms");
  EXPECT_EQ(DurationText(24 * kNsPerHour), "24h");
  EXPECT_EQ(DurationText(600'000 * kNsPerMs), "10m");
  EXPECT_EQ(DurationText(1500), "1500ns");
  EXPECT_EQ(SizeText(64 << 10), "64KiB");
  EXPECT_EQ(SizeText(uint64_t{1} << 40), "1TiB");
  EXPECT_EQ(SizeText(1000), "1000B");
  EXPECT_EQ(CeilDiv(1, kNsPerMs), 1u);
  EXPECT_EQ(CeilDiv(2 * kNsPerMs, kNsPerMs), 2u);
  EXPECT_EQ(CeilDiv(0, kNsPerMs), 0u);
}

}  // namespace
}  // namespace gpuperf
