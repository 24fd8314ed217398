#include "format/live_accumulator.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "format/live_seqlock.h"
#include "format/live_text.h"

namespace gpuperf::live {
namespace {

constexpr uint64_t kSecond = 1000000000ull;
constexpr uint64_t kBase = 5000 * kSecond;  // a CLOCK_MONOTONIC time well after boot

class LiveAccumulatorTest : public ::testing::Test {
 protected:
  LiveAccumulatorTest()
      : page_(std::make_unique<Page>()),
        accumulator_([this](StringId id) { return names_.count(id) ? names_[id] : ""; }) {}

  template <class T>
  T Read(const Block<T>& block) {
    T value;
    EXPECT_TRUE(SeqlockRead(block, value, 1));
    return value;
  }
  Counters PublishAndRead(uint64_t now = kBase + 10 * kSecond) {
    accumulator_.Publish(*page_, now, true);
    return Read(page_->counters);
  }
  KernelRecord Kernel(StringId name, uint64_t start, uint64_t end, uint32_t device = 0) {
    KernelRecord k;
    k.name = name;
    k.device_id = device;
    k.start_ns = start;
    k.end_ns = end;
    return k;
  }

  std::map<StringId, std::string> names_;
  std::unique_ptr<Page> page_;
  LiveAccumulator accumulator_;
};

TEST_F(LiveAccumulatorTest, TimeByKindAndActiveTimeAsTheUnionOfIntervals) {
  // Two overlapping kernels, a copy inside the second, a set after both.
  accumulator_.AddKernel(Kernel(1, kBase + 100, kBase + 300));
  accumulator_.AddKernel(Kernel(1, kBase + 200, kBase + 400));
  MemcpyRecord copy;
  copy.kind = MemcpyKind::kHtoD;
  copy.bytes = 4096;
  copy.start_ns = kBase + 250;
  copy.end_ns = kBase + 350;
  accumulator_.AddMemcpy(copy);
  MemsetRecord set;
  set.bytes = 64;
  set.start_ns = kBase + 1000;
  set.end_ns = kBase + 1010;
  accumulator_.AddMemset(set);
  const Counters c = PublishAndRead();
  ASSERT_EQ(c.device_count, 1u);
  const DeviceCounters& d = c.devices[0];
  EXPECT_EQ(d.kernels, 2u);
  EXPECT_EQ(d.kernel_ns, 400u);
  EXPECT_EQ(d.copy_ns, 100u);
  EXPECT_EQ(d.set_ns, 10u);
  EXPECT_EQ(d.active_ns, 310u);  // [100, 400) and [1000, 1010)
  EXPECT_EQ(d.copy_bytes[kCopyHtoD], 4096u);
  EXPECT_EQ(d.set_bytes, 64u);
  EXPECT_EQ(c.updates, 1u);
  EXPECT_EQ(c.updated_monotonic_ns, kBase + 10 * kSecond);
}

TEST_F(LiveAccumulatorTest, WorkArrivingAfterLaterWorkAddsOnlyWhatLiesPastIt) {
  accumulator_.AddKernel(Kernel(1, kBase + 1000, kBase + 2000));
  PublishAndRead();
  // Handed over one publish later, but mostly before the work already folded.
  accumulator_.AddKernel(Kernel(1, kBase + 500, kBase + 2500));
  const Counters c = PublishAndRead();
  EXPECT_EQ(c.devices[0].kernel_ns, 3000u);
  EXPECT_EQ(c.devices[0].active_ns, 1500u);
}

TEST_F(LiveAccumulatorTest, OneSecondBucketsSplitIntervalsAtSecondBoundaries) {
  accumulator_.AddKernel(Kernel(1, kBase + kSecond - 300, kBase + kSecond + 700));
  accumulator_.AddKernel(Kernel(1, kBase + 2 * kSecond, kBase + 2 * kSecond + 50));
  PublishAndRead();
  const auto ring = std::make_unique<Ring>();
  ASSERT_TRUE(SeqlockRead(page_->ring, *ring, 1));
  const uint64_t first = kBase / kSecond;
  auto bucket = [&](uint64_t second) { return ring->devices[0][second % kRingSeconds]; };
  EXPECT_EQ(bucket(first).second, first);
  EXPECT_EQ(bucket(first).kernel_ns, 300u);
  EXPECT_EQ(bucket(first).active_ns, 300u);
  EXPECT_EQ(bucket(first).kernels, 1u);  // counted where it started
  EXPECT_EQ(bucket(first + 1).kernel_ns, 700u);
  EXPECT_EQ(bucket(first + 1).kernels, 0u);
  EXPECT_EQ(bucket(first + 2).kernel_ns, 50u);
  EXPECT_EQ(bucket(first + 2).kernels, 1u);
  // A second kRingSeconds later takes the same slot and starts from zero.
  accumulator_.AddKernel(
      Kernel(1, kBase + kRingSeconds * kSecond, kBase + kRingSeconds * kSecond + 9));
  PublishAndRead();
  ASSERT_TRUE(SeqlockRead(page_->ring, *ring, 1));
  EXPECT_EQ(bucket(first).second, first + kRingSeconds);
  EXPECT_EQ(bucket(first).kernel_ns, 9u);
}

TEST_F(LiveAccumulatorTest, DeviceMemoryInTimeOrderWithItsPeak) {
  auto memory = [](MemoryOp op, uint64_t bytes, uint64_t at, MemoryKind kind) {
    MemoryRecord m;
    m.op = op;
    m.bytes = bytes;
    m.timestamp_ns = at;
    m.memory_kind = kind;
    return m;
  };
  // Handed over out of order: the release comes first but happened last.
  accumulator_.AddMemory(memory(MemoryOp::kRelease, 1 << 20, kBase + 30, MemoryKind::kDevice));
  accumulator_.AddMemory(memory(MemoryOp::kAllocation, 3 << 20, kBase + 10, MemoryKind::kDevice));
  accumulator_.AddMemory(memory(MemoryOp::kAllocation, 1 << 20, kBase + 20, MemoryKind::kDevice));
  // Pinned host memory is not the device's.
  accumulator_.AddMemory(memory(MemoryOp::kAllocation, 8 << 20, kBase + 25, MemoryKind::kPinned));
  const Counters c = PublishAndRead();
  EXPECT_EQ(c.devices[0].memory_current, 3u << 20);
  EXPECT_EQ(c.devices[0].memory_peak, 4u << 20);
  EXPECT_EQ(c.devices[0].allocations, 2u);
  EXPECT_EQ(c.devices[0].frees, 1u);
}

TEST_F(LiveAccumulatorTest, TopKernelsByTimeDemangledWithTheRestSummed) {
  for (StringId id = 1; id <= kMaxKernels + 6; ++id) {
    names_[id] = "_Z6kernelILi" + std::to_string(id) + "EEvv";
    accumulator_.AddKernel(Kernel(id, kBase, kBase + 100 * id));
    accumulator_.AddKernel(Kernel(id, kBase, kBase + 100 * id));
  }
  PublishAndRead();
  const auto kernels = std::make_unique<Kernels>();
  ASSERT_TRUE(SeqlockRead(page_->kernels, *kernels, 1));
  ASSERT_EQ(kernels->count, kMaxKernels);
  EXPECT_EQ(TextOf(kernels->entries[0].name), "void kernel<70>()");
  EXPECT_EQ(kernels->entries[0].ns, 2 * 100u * 70);
  EXPECT_EQ(kernels->entries[0].count, 2u);
  EXPECT_EQ(TextOf(kernels->entries[kMaxKernels - 1].name), "void kernel<7>()");
  // Kernels 1-6 are not in the table.
  EXPECT_EQ(kernels->other_count, 12u);
  EXPECT_EQ(kernels->other_ns, 2 * 100u * (1 + 2 + 3 + 4 + 5 + 6));
}

TEST_F(LiveAccumulatorTest, ApiCallsFailuresAndAnOtherRowPastTheTable) {
  const uint32_t apis = kMaxApis + 3;
  for (StringId id = 1; id <= apis; ++id) {
    names_[id] = "cudaApi" + std::to_string(id);
    for (StringId n = 0; n < id; ++n) {
      ApiRecord call;
      call.name = id;
      call.start_ns = kBase;
      call.end_ns = kBase + 10;
      // 600 (not ready) is an answer, not a failure.
      call.return_code = id == apis ? 2 : id == apis - 1 ? 600 : 0;
      accumulator_.AddApi(call);
    }
  }
  const Counters c = PublishAndRead();
  EXPECT_EQ(c.api_calls, uint64_t{apis} * (apis + 1) / 2);
  EXPECT_EQ(c.api_failures, uint64_t{apis});
  const auto table = std::make_unique<Apis>();
  ASSERT_TRUE(SeqlockRead(page_->apis, *table, 1));
  ASSERT_EQ(table->count, kMaxApis);
  EXPECT_EQ(TextOf(table->entries[0].name), "cudaApi" + std::to_string(apis));
  EXPECT_EQ(table->entries[0].failures, uint64_t{apis});
  EXPECT_EQ(table->entries[1].failures, 0u);
  const ApiEntry& other = table->entries[kMaxApis - 1];
  EXPECT_EQ(TextOf(other.name), "(other)");
  EXPECT_EQ(other.calls, 1u + 2 + 3 + 4);  // the four least called
  EXPECT_EQ(other.ns, 10u * (1 + 2 + 3 + 4));
}

TEST_F(LiveAccumulatorTest, DeviceNamesUuidsAndDevicesPastTheTable) {
  names_[9] = "NVIDIA H100";
  DeviceRecord device;
  device.device_id = 3;
  device.name = 9;
  accumulator_.AddDevice(device);
  const uint8_t uuid[16] = {0xab, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  accumulator_.SetDeviceUuid(3, uuid);
  for (uint32_t id = 100; id < 100 + kMaxDevices; ++id) {
    accumulator_.AddKernel(Kernel(1, kBase, kBase + 1, id));
  }
  const Counters c = PublishAndRead();
  EXPECT_EQ(c.device_count, kMaxDevices);
  EXPECT_EQ(c.devices[0].device_id, 3u);
  EXPECT_EQ(TextOf(c.devices[0].name), "NVIDIA H100");
  EXPECT_EQ(c.devices[0].has_uuid, 1u);
  EXPECT_EQ(c.devices[0].uuid[0], 0xab);
  EXPECT_EQ(accumulator_.records_left_out(), 1u);  // the 17th device's kernel
}

TEST(LiveTextTest, CutsAtACharacterBoundaryAndTerminates) {
  char field[6];
  CopyText(field, "ab\xc2\xb5\xc2\xb5");  // "abµµ": 6 bytes, room for 5
  EXPECT_EQ(TextOf(field), "ab\xc2\xb5");
  CopyText(field, "x");
  EXPECT_EQ(TextOf(field), "x");
  char unterminated[3] = {'a', 'b', 'c'};
  EXPECT_EQ(TextOf(unterminated), "abc");
}

}  // namespace
}  // namespace gpuperf::live
