// NCCL kernel names and the matching of collective instances across ranks.
#include "analyze/ranks/collectives.h"

#include <gtest/gtest.h>

namespace gpuperf {
namespace {

TEST(Collectives, NamesNcclKernelsWhateverTheirForm) {
  EXPECT_EQ(CommKernelName(
                "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"),
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  // A mangled name the demangler refuses still has its length prefix.
  EXPECT_EQ(CommKernelName("_Z22ncclDevKernel_SendRecv24ncclDevKernelArgsStorage?"),
            "ncclDevKernel_SendRecv");
  EXPECT_EQ(CommKernelName("ncclKernel_AllGather_RING_LL_Sum_int8_t"),
            "ncclKernel_AllGather_RING_LL_Sum_int8_t");
  EXPECT_EQ(CommKernelName("ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"),
            "ncclDevKernel_SendRecv");
  EXPECT_EQ(CommKernelName("_Z6vecAddPKfS0_Pfi"), "");
  EXPECT_EQ(CommKernelName("void at::native::reduce_kernel<512, 1>(float*)"), "");
  EXPECT_EQ(CollectiveKind("ncclDevKernel_AllReduce_Sum_f32_RING_LL"), "AllReduce");
  EXPECT_EQ(CollectiveKind("ncclKernel_ReduceScatter_RING_SIMPLE_Sum_half"), "ReduceScatter");
  EXPECT_EQ(CollectiveKind("ncclDevKernel_SendRecv"), "SendRecv");
}

TEST(Collectives, MatchesTheNthKernelOfEachSequenceAcrossRanks) {
  // Rank 0 (pid 10) ran 3 all-reduces and a broadcast on stream 5; rank 1 (pid 11) the same
  // on stream 8 (streams are numbered per process), but its trace lost the last all-reduce.
  std::map<uint32_t, std::vector<CommKernel>> kernels;
  kernels[10] = {{1, 5, 0, 300, 350}, {2, 5, 0, 50, 80}, {1, 5, 0, 100, 150}, {1, 5, 0, 200, 250}};
  kernels[11] = {{1, 8, 1, 120, 150}, {1, 8, 1, 210, 250}, {2, 8, 1, 40, 80}};
  MatchedCollectives matched = MatchCollectives(kernels);
  ASSERT_EQ(matched.instances.size(), 3u);  // all-reduce #0, #1 and the broadcast
  EXPECT_EQ(matched.unmatched, 1u);         // rank 0's third all-reduce
  const CollectiveInstance& first = matched.instances[0];
  EXPECT_EQ(first.name, 1u);
  EXPECT_EQ(first.ordinal, 0u);
  ASSERT_EQ(first.arrivals.size(), 2u);
  EXPECT_EQ(first.arrivals[0].pid, 10u);
  EXPECT_EQ(first.arrivals[0].start_ns, 100u);
  EXPECT_EQ(first.arrivals[1].pid, 11u);
  EXPECT_EQ(first.arrivals[1].start_ns, 120u);
  EXPECT_EQ(matched.instances[1].arrivals[1].start_ns, 210u);
  EXPECT_EQ(matched.instances[2].name, 2u);
  EXPECT_EQ(matched.instances[2].arrivals[0].start_ns, 50u);
}

TEST(Collectives, SecondStreamIsItsOwnSequence) {
  // Two communicators per rank (two NCCL streams, used in the same order on both ranks).
  std::map<uint32_t, std::vector<CommKernel>> kernels;
  kernels[1] = {{1, 3, 0, 10, 20}, {1, 4, 0, 15, 30}, {1, 3, 0, 40, 50}};
  kernels[2] = {{1, 6, 0, 12, 20}, {1, 9, 0, 18, 30}, {1, 6, 0, 41, 50}};
  MatchedCollectives matched = MatchCollectives(kernels);
  ASSERT_EQ(matched.instances.size(), 3u);
  EXPECT_EQ(matched.unmatched, 0u);
  EXPECT_EQ(matched.instances[0].stream_ordinal, 0u);
  EXPECT_EQ(matched.instances[1].stream_ordinal, 0u);
  EXPECT_EQ(matched.instances[1].arrivals[1].start_ns, 41u);
  EXPECT_EQ(matched.instances[2].stream_ordinal, 1u);
  EXPECT_EQ(matched.instances[2].arrivals[1].start_ns, 18u);
}

}  // namespace
}  // namespace gpuperf
