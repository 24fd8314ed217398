#include "inject/launch_sampler.h"

#include <gtest/gtest.h>

namespace gpuperf::inject {
namespace {

constexpr uint64_t kMs = 1'000'000ull;

int CountTaken(const LaunchSampler& sampler, LaunchSampler::Bucket& bucket, uint64_t start,
               uint64_t gap, int launches) {
  int taken = 0;
  for (int i = 0; i < launches; ++i) taken += sampler.Take(bucket, start + i * gap);
  return taken;
}

TEST(LaunchSamplerTest, OffTakesEveryStack) {
  LaunchSampler sampler;
  sampler.Configure(0);
  EXPECT_FALSE(sampler.enabled());
}

TEST(LaunchSamplerTest, ABurstTakesATenthOfTheRateThenNone) {
  LaunchSampler sampler;
  sampler.Configure(100);
  LaunchSampler::Bucket bucket;
  EXPECT_EQ(CountTaken(sampler, bucket, 5000 * kMs, 0, 1000), 10);
}

TEST(LaunchSamplerTest, ASteadyStreamTakesTheRatePlusTheBurst) {
  LaunchSampler sampler;
  sampler.Configure(100);
  LaunchSampler::Bucket bucket;
  // 10,000 launches a second for 2 s: the first 10 at once, then one each 10 ms.
  const int taken = CountTaken(sampler, bucket, 5000 * kMs, 100'000, 20000);
  EXPECT_GE(taken, 205);
  EXPECT_LE(taken, 212);
}

TEST(LaunchSamplerTest, LaunchesSlowerThanTheRateAreAllTaken) {
  LaunchSampler sampler;
  sampler.Configure(100);
  LaunchSampler::Bucket bucket;
  EXPECT_EQ(CountTaken(sampler, bucket, 5000 * kMs, 20 * kMs, 300), 300);
}

TEST(LaunchSamplerTest, AQuietThreadGetsItsBurstBack) {
  LaunchSampler sampler;
  sampler.Configure(50);
  LaunchSampler::Bucket bucket;
  EXPECT_EQ(CountTaken(sampler, bucket, 1000 * kMs, 0, 100), 5);
  EXPECT_EQ(CountTaken(sampler, bucket, 3000 * kMs, 0, 100), 5);
}

}  // namespace
}  // namespace gpuperf::inject
