#include "inject/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace gpuperf::inject {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

// Reads the configuration with one variable set; the variable is gone afterwards.
Config ReadWith(const char* name, const char* value, std::string* error) {
  setenv(name, value, 1);
  error->clear();
  Config config = ReadConfigFromEnvironment(error);
  unsetenv(name);
  return config;
}

TEST(ConfigTest, NumbersInTheVariablesUnitOrWithTheirOwn) {
  std::string error;
  EXPECT_EQ(ReadWith("GPUPERF_BUFFER_KB", "512", &error).buffer_bytes, 512u << 10);
  EXPECT_EQ(ReadWith("GPUPERF_BUFFER_KB", "1 MiB", &error).buffer_bytes, 1u << 20);
  EXPECT_EQ(ReadWith("GPUPERF_MAX_MEMORY_MB", "1.5GiB", &error).max_memory_bytes, 1536 * kMiB);
  EXPECT_EQ(ReadWith("GPUPERF_DELAY_MS", "2.5s", &error).delay_ms, 2500u);
  EXPECT_EQ(ReadWith("GPUPERF_DURATION_MS", "1e3", &error).duration_ms, 1000u);
  EXPECT_EQ(ReadWith("GPUPERF_FLUSH_PERIOD_MS", "250", &error).flush_period_ms, 250u);
  EXPECT_EQ(ReadWith("GPUPERF_STACK_DEPTH", "1e2", &error).max_stack_depth, 100u);
  EXPECT_EQ(ReadWith("GPUPERF_SAMPLE_LAUNCHES", "100/s", &error).sample_launches_per_s, 100u);
  EXPECT_EQ(ReadWith("GPUPERF_FLIGHT_MS", "60s", &error).flight_window_ms, 60000u);
  EXPECT_EQ(ReadWith("GPUPERF_CUPTI_FLUSH_MS", "0", &error).cupti_flush_period_ms, 0u);
  Config windows = ReadWith("GPUPERF_METRICS_RANGES", "window:10ms", &error);
  EXPECT_EQ(windows.metric_ranges, MetricRanges::kWindows);
  EXPECT_EQ(windows.metric_window_ms, 10u);
  EXPECT_EQ(error, "");
}

// A bad value keeps the default and says why in one line, which the library logs once.
TEST(ConfigTest, BadValuesKeepTheDefaultAndSayWhy) {
  const Config defaults = [] {
    std::string ignored;
    return ReadConfigFromEnvironment(&ignored);
  }();
  struct Case {
    const char* name;
    const char* value;
    const char* error;
  } cases[] = {
      {"GPUPERF_BUFFER_KB", "-1", "GPUPERF_BUFFER_KB: \"-1\" is out of range; use 64KiB to 1GiB"},
      {"GPUPERF_BUFFER_KB", "nan",
       "GPUPERF_BUFFER_KB: \"nan\" is not a size; use e.g. 64 (KiB), 512KiB, 1.5GiB"},
      {"GPUPERF_MAX_MEMORY_MB", "17592186044416",
       "GPUPERF_MAX_MEMORY_MB: \"17592186044416\" is out of range; use 4MiB to 64GiB"},
      {"GPUPERF_STACK_DEPTH", "1000",
       "GPUPERF_STACK_DEPTH: \"1000\" is out of range; use 1 to 256"},
      {"GPUPERF_POWER_HZ", "5000", "GPUPERF_POWER_HZ: \"5000\" is out of range; use 0 to 1000"},
      {"GPUPERF_DELAY_MS", "1e30", "GPUPERF_DELAY_MS: \"1e30\" is out of range; use 0 to 1000000h"},
      {"GPUPERF_DURATION_MS", "inf",
       "GPUPERF_DURATION_MS: \"inf\" is not a duration; use e.g. 200 (ms), 500ms, 1.5s, 2m"},
      {"GPUPERF_FLUSH_PERIOD_MS", "10 parsecs",
       "GPUPERF_FLUSH_PERIOD_MS: \"10 parsecs\" is not a duration; use e.g. 200 (ms), 500ms, "
       "1.5s, 2m"},
      {"GPUPERF_FLIGHT_SIGNAL", "4294967308",
       "GPUPERF_FLIGHT_SIGNAL: \"4294967308\" is out of range; use 0 to 64"},
      {"GPUPERF_SAMPLE_LAUNCHES", "99999999999",
       "GPUPERF_SAMPLE_LAUNCHES: \"99999999999\" is out of range; use 0 to 1000000 (e.g. 100/s)"},
      {"GPUPERF_PC_PERIOD", "40", "GPUPERF_PC_PERIOD: \"40\" is out of range; use 5 to 31"},
      {"GPUPERF_CUBIN_CAP_MB", "0x10",
       "GPUPERF_CUBIN_CAP_MB: \"0x10\" is not a size; use e.g. 64 (MiB), 512KiB, 1.5GiB"},
      {"GPUPERF_METRICS_RANGES", "window:0",
       "GPUPERF_METRICS_RANGES window: \"0\" is out of range; use 1ms to 24h"},
  };
  for (const Case& c : cases) {
    std::string error;
    const Config config = ReadWith(c.name, c.value, &error);
    EXPECT_EQ(error, c.error) << c.name << "=" << c.value;
    EXPECT_EQ(config.buffer_bytes, defaults.buffer_bytes) << c.name;
    EXPECT_EQ(config.max_memory_bytes, defaults.max_memory_bytes) << c.name;
    EXPECT_EQ(config.max_stack_depth, defaults.max_stack_depth) << c.name;
    EXPECT_EQ(config.power_hz, defaults.power_hz) << c.name;
    EXPECT_EQ(config.delay_ms, defaults.delay_ms) << c.name;
    EXPECT_EQ(config.duration_ms, defaults.duration_ms) << c.name;
    EXPECT_EQ(config.flush_period_ms, defaults.flush_period_ms) << c.name;
    EXPECT_EQ(config.flight_signal, defaults.flight_signal) << c.name;
    EXPECT_EQ(config.sample_launches_per_s, defaults.sample_launches_per_s) << c.name;
    EXPECT_EQ(config.pc_sampling_period, defaults.pc_sampling_period) << c.name;
    EXPECT_EQ(config.cubin_cap_bytes, defaults.cubin_cap_bytes) << c.name;
    EXPECT_EQ(config.metric_ranges, defaults.metric_ranges) << c.name;
  }
}

// The largest values taken still fit the sums the library makes of them (a capture range is
// start + delay + duration, in nanoseconds).
TEST(ConfigTest, TheLargestCaptureRangeFitsANanosecondClock) {
  setenv("GPUPERF_DELAY_MS", "1000000h", 1);
  setenv("GPUPERF_DURATION_MS", "1000000h", 1);
  std::string error;
  const Config config = ReadConfigFromEnvironment(&error);
  unsetenv("GPUPERF_DELAY_MS");
  unsetenv("GPUPERF_DURATION_MS");
  EXPECT_EQ(error, "");
  const uint64_t ten_years_of_uptime_ns = 10ull * 365 * 24 * 3600 * 1'000'000'000;
  const uint64_t end =
      ten_years_of_uptime_ns + config.delay_ms * 1'000'000ull + config.duration_ms * 1'000'000ull;
  EXPECT_GT(end, config.delay_ms * 1'000'000ull);  // no wrap
  EXPECT_EQ(config.delay_ms, 3'600'000'000'000u);
}

}  // namespace
}  // namespace gpuperf::inject
