#include "base/activities.h"

#include <gtest/gtest.h>

namespace gpuperf {
namespace {

TEST(Activities, ParsesNamesAllAndDefault) {
  uint32_t bits = 0;
  std::string bad;
  ASSERT_TRUE(ParseActivities("kernel,memcpy", &bits, &bad));
  EXPECT_EQ(bits, kActKernel | kActMemcpy);
  ASSERT_TRUE(ParseActivities("default", &bits, &bad));
  EXPECT_EQ(bits, kDefaultActivities);
  EXPECT_EQ(bits & kActGraph, 0u);
  ASSERT_TRUE(ParseActivities("all", &bits, &bad));
  EXPECT_NE(bits & kActGraph, 0u);
  ASSERT_TRUE(ParseActivities("nvtx,,", &bits, &bad));
  EXPECT_EQ(bits, kActNvtx);
}

TEST(Activities, RejectsUnknownNames) {
  uint32_t bits = 7;
  std::string bad;
  EXPECT_FALSE(ParseActivities("kernel,kernels", &bits, &bad));
  EXPECT_EQ(bad, "kernels");
  EXPECT_EQ(bits, 7u);  // untouched on error
}

}  // namespace
}  // namespace gpuperf
