#include "analyze/ranks/nccl_join.h"

#include <gtest/gtest.h>

namespace gpuperf {
namespace {

TEST(NcclJoin, EachCallJoinsItsThreadsLatestLaunchBeforeIt) {
  const NcclLaunch launches[] = {{7, 100}, {7, 200}, {8, 150}, {7, 300}};
  const NcclCall calls[] = {
      {7, 105},  // after the first launch
      {7, 210},  // after the second
      {8, 160},  // another thread's own launch, though thread 7 launched later
      {7, 200},  // at the launch's entry exactly
  };
  EXPECT_EQ(JoinNcclCalls(calls, launches), (std::vector<size_t>{0, 1, 2, 1}));
}

TEST(NcclJoin, AGroupSharesOneLaunch) {
  const NcclLaunch launches[] = {{7, 100}};
  const NcclCall calls[] = {{7, 110}, {7, 111}, {7, 112}};
  EXPECT_EQ(JoinNcclCalls(calls, launches), (std::vector<size_t>{0, 0, 0}));
}

TEST(NcclJoin, CallsWithoutALaunchOnTheirThreadStayUnjoined) {
  const NcclLaunch launches[] = {{7, 100}};
  const NcclCall calls[] = {
      {9, 150},                            // CUDA's callback thread: no launch there
      {7, 50},                             // before any launch of its thread
      {7, 100 + kMaxLaunchToEventNs + 1},  // too long after the last one
      {7, 100 + kMaxLaunchToEventNs},      // just in time
  };
  EXPECT_EQ(JoinNcclCalls(calls, launches),
            (std::vector<size_t>{kNotJoined, kNotJoined, kNotJoined, 0}));
  EXPECT_EQ(JoinNcclCalls(calls, {}), std::vector<size_t>(4, kNotJoined));
}

TEST(NcclJoin, SizesAndBusFactorsAsNcclTestsDefineThem) {
  EXPECT_EQ(NcclCollectiveBytes("AllReduce", 262144, 4, 2), 1048576u);
  EXPECT_EQ(NcclCollectiveBytes("AllGather", 1000, 1, 8), 8000u);
  EXPECT_EQ(NcclCollectiveBytes("ReduceScatter", 10, 4, 4), 160u);
  EXPECT_EQ(NcclCollectiveBytes("Broadcast", 4096, 1, 2), 4096u);
  EXPECT_EQ(NcclCollectiveBytes("AllGather", 1000, 1, 0), 1000u);  // nranks unknown
  EXPECT_DOUBLE_EQ(NcclBusFactor("AllReduce", 2), 1.0);
  EXPECT_DOUBLE_EQ(NcclBusFactor("AllReduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(NcclBusFactor("AllGather", 4), 0.75);
  EXPECT_DOUBLE_EQ(NcclBusFactor("Broadcast", 8), 1.0);
  EXPECT_DOUBLE_EQ(NcclBusFactor("AllReduce", 0), 1.0);
}

}  // namespace
}  // namespace gpuperf
