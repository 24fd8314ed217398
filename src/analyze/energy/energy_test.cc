// Energy attribution on power readings and kernels whose every joule is known.
#include "analyze/energy/energy.h"

#include <gtest/gtest.h>

namespace gpuperf {
namespace {

constexpr uint64_t kMs = 1'000'000;

PowerSampleRecord Reading(uint64_t t, uint32_t mw, uint64_t energy_mj = 0, uint32_t pid = 1,
                          uint32_t device = 0) {
  return PowerSampleRecord{pid, device, t, mw, energy_mj, PowerSource::kInstant};
}

TEST(Energy, SharesPowerAmongConcurrentKernelsAndCountsIdle) {
  // 100 W from 0 to 20 ms. A alone [0, 5 ms); B and C together [5, 10 ms); nothing after.
  std::vector<PowerSampleRecord> readings = {Reading(0, 100'000), Reading(10 * kMs, 100'000),
                                             Reading(20 * kMs, 100'000)};
  std::vector<EnergySpan> spans = {
      {1, 0, 0, 5 * kMs, 0}, {1, 0, 5 * kMs, 10 * kMs, 1}, {1, 0, 5 * kMs, 10 * kMs, 2}};
  EnergyAttribution e = AttributeEnergy(readings, spans, 3);
  ASSERT_EQ(e.joules_by_tag.size(), 3u);
  EXPECT_DOUBLE_EQ(e.joules_by_tag[0], 0.5);   // 100 W x 5 ms
  EXPECT_DOUBLE_EQ(e.joules_by_tag[1], 0.25);  // half of 100 W x 5 ms
  EXPECT_DOUBLE_EQ(e.joules_by_tag[2], 0.25);
  ASSERT_EQ(e.devices.size(), 1u);
  const EnergyDevice& d = e.devices[0];
  EXPECT_DOUBLE_EQ(d.sampled_j, 2.0);
  EXPECT_DOUBLE_EQ(d.attributed_j, 1.0);
  EXPECT_DOUBLE_EQ(d.idle_j, 1.0);
  EXPECT_EQ(d.samples, 3u);
  EXPECT_DOUBLE_EQ(d.rate_hz, 100.0);
  EXPECT_EQ(d.kernel_ns, 15 * kMs);
  EXPECT_EQ(d.unsampled_kernel_ns, 0u);
  EXPECT_EQ(d.counter_j, -1);  // the counter was never read
}

TEST(Energy, BetweenTwoReadingsTheBoardDrewTheirMean) {
  // 100 W at 0, 300 W at 10 ms: 200 W all along (the trapezoid rule), 1 J for each half.
  std::vector<PowerSampleRecord> readings = {
      Reading(0, 100'000, 5'000), Reading(10 * kMs, 300'000, 7'100), Reading(20 * kMs, 300'000, 0)};
  std::vector<EnergySpan> spans = {
      {1, 0, 0, 5 * kMs, 0}, {1, 0, 5 * kMs, 10 * kMs, 1}, {1, 0, 10 * kMs, 15 * kMs, 1}};
  EnergyAttribution e = AttributeEnergy(readings, spans, 2);
  EXPECT_NEAR(e.joules_by_tag[0], 1.0, 1e-12);
  EXPECT_NEAR(e.joules_by_tag[1], 1.0 + 1.5, 1e-12);  // and 300 W x 5 ms after 10 ms
  const EnergyDevice& d = e.devices[0];
  EXPECT_DOUBLE_EQ(d.sampled_j, 5.0);
  EXPECT_NEAR(d.idle_j, 1.5, 1e-12);
  // The counter advanced 2.1 J over the stretch (0 to 10 ms) the readings integrate to 2 J.
  EXPECT_DOUBLE_EQ(d.counter_j, 2.1);
  EXPECT_DOUBLE_EQ(d.sampled_over_counter_j, 2.0);
}

TEST(Energy, KernelsOutsideTheWindowAndOtherGpusGetNothing) {
  std::vector<PowerSampleRecord> readings = {Reading(10 * kMs, 200'000), Reading(20 * kMs, 200'000),
                                             Reading(10 * kMs, 50'000, 0, 1, 1),
                                             Reading(30 * kMs, 50'000, 0, 1, 1)};
  std::vector<EnergySpan> spans = {
      {1, 0, 5 * kMs, 15 * kMs, 0},   // half before the window
      {1, 0, 25 * kMs, 26 * kMs, 1},  // after it
      {1, 1, 10 * kMs, 30 * kMs, 2},  // alone on GPU 1
      {2, 0, 10 * kMs, 20 * kMs, 3},  // another process's GPU 0: no readings there
  };
  EnergyAttribution e = AttributeEnergy(readings, spans, 4);
  EXPECT_DOUBLE_EQ(e.joules_by_tag[0], 1.0);  // 200 W x 5 ms inside
  EXPECT_DOUBLE_EQ(e.joules_by_tag[1], 0);
  EXPECT_DOUBLE_EQ(e.joules_by_tag[2], 1.0);  // 50 W x 20 ms
  EXPECT_DOUBLE_EQ(e.joules_by_tag[3], 0);
  ASSERT_EQ(e.devices.size(), 2u);
  EXPECT_EQ(e.devices[0].unsampled_kernel_ns, 5 * kMs + 1 * kMs);
  EXPECT_DOUBLE_EQ(e.devices[0].idle_j, 1.0);
  EXPECT_DOUBLE_EQ(e.devices[1].idle_j, 0);
  EXPECT_DOUBLE_EQ(e.attributed_j(), 2.0);
}

TEST(Energy, ReadingsWithoutPowerOnlyCarryTheCounter) {
  std::vector<PowerSampleRecord> readings = {Reading(0, 100'000), Reading(10 * kMs, 100'000)};
  readings.push_back(PowerSampleRecord{1, 0, 5 * kMs, 0, 42, PowerSource::kNone});
  EnergyAttribution e = AttributeEnergy(readings, {}, 0);
  ASSERT_EQ(e.devices.size(), 1u);
  EXPECT_EQ(e.devices[0].samples, 2u);
  EXPECT_DOUBLE_EQ(e.devices[0].sampled_j, 1.0);
  EXPECT_DOUBLE_EQ(e.devices[0].idle_j, 1.0);
}

}  // namespace
}  // namespace gpuperf
