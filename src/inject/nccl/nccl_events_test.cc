#include "inject/nccl/nccl_events.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace gpuperf::inject {
namespace {

NcclCollectiveStart AllReduce(uint64_t seq, uint64_t count) {
  NcclCollectiveStart f;
  f.seq = seq;
  f.func = "AllReduce";
  f.datatype = "ncclFloat32";
  f.algorithm = "RING";
  f.protocol = "LL";
  f.count = count;
  f.rank = 1;
  f.channels = 2;
  return f;
}

struct Drained {
  std::vector<NcclCollectiveRecord> collectives;
  std::vector<NcclCommRecord> comms;
};

Drained DrainAll(NcclEventTable& table, NameTable& names, bool final = false) {
  Drained d;
  table.Drain(42, names, d.collectives, d.comms, final);
  return d;
}

TEST(NcclEvents, TypeSizes) {
  EXPECT_EQ(NcclTypeSize("ncclFloat32"), 4u);
  EXPECT_EQ(NcclTypeSize("ncclBfloat16"), 2u);
  EXPECT_EQ(NcclTypeSize("ncclInt8"), 1u);
  EXPECT_EQ(NcclTypeSize("ncclFloat64"), 8u);
  EXPECT_EQ(NcclTypeSize("ncclFloat4"), 0u);
  EXPECT_EQ(NcclTypeSize(nullptr), 0u);
}

TEST(NcclEvents, RecordsWhatTheDescriptorSaid) {
  auto table = std::make_unique<NcclEventTable>();
  NameTable names;
  auto* comm = table->AddComm(0xabcdef, "dp", 1, 2, 1, 5, 100);
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(table->FindComm(comm), comm);
  void* handle = table->Start(comm, AllReduce(7, 1000), 1234, 200);
  ASSERT_NE(handle, nullptr);
  // Not stopped yet: nothing to drain but the communicator.
  Drained first = DrainAll(*table, names);
  ASSERT_EQ(first.comms.size(), 1u);
  EXPECT_EQ(first.comms[0].comm_hash, 0xabcdefu);
  EXPECT_EQ(names.TextOf(first.comms[0].name), "dp");
  EXPECT_EQ(first.comms[0].plugin_version, 5u);
  EXPECT_TRUE(first.collectives.empty());
  ASSERT_TRUE(table->Stop(handle, 250));
  EXPECT_FALSE(table->Stop(handle, 260));  // stopped twice: the second is refused
  Drained second = DrainAll(*table, names);
  EXPECT_TRUE(second.comms.empty());  // written once
  ASSERT_EQ(second.collectives.size(), 1u);
  const NcclCollectiveRecord& r = second.collectives[0];
  EXPECT_EQ(r.pid, 42u);
  EXPECT_EQ(r.tid, 1234u);
  EXPECT_EQ(r.comm_hash, 0xabcdefu);
  EXPECT_EQ(r.rank, 1);
  EXPECT_EQ(r.nranks, 2);
  EXPECT_EQ(r.seq, 7u);
  EXPECT_EQ(names.TextOf(r.func), "AllReduce");
  EXPECT_EQ(r.count, 1000u);
  EXPECT_EQ(r.type_size, 4u);
  EXPECT_EQ(names.TextOf(r.algorithm), "RING");
  EXPECT_EQ(names.TextOf(r.protocol), "LL");
  EXPECT_EQ(r.channels, 2u);
  EXPECT_EQ(r.start_ns, 200u);
  EXPECT_EQ(r.end_ns, 250u);
  EXPECT_TRUE(DrainAll(*table, names).collectives.empty());  // the slot was freed
}

TEST(NcclEvents, RefusesHandlesAndContextsThatAreNotItsOwn) {
  auto table = std::make_unique<NcclEventTable>();
  NameTable names;
  int unrelated = 0;
  EXPECT_EQ(table->FindComm(&unrelated), nullptr);
  EXPECT_EQ(table->FindComm(nullptr), nullptr);
  EXPECT_FALSE(table->Stop(&unrelated, 1));
  EXPECT_FALSE(table->Stop(nullptr, 1));
  auto* comm = table->AddComm(1, nullptr, 0, 2, 1, 4, 0);
  ASSERT_NE(comm, nullptr);
  // A pointer inside the communicator table but not at a communicator.
  EXPECT_EQ(table->FindComm(reinterpret_cast<char*>(comm) + 1), nullptr);
  void* handle = table->Start(comm, AllReduce(0, 1), 1, 1);
  EXPECT_FALSE(table->Stop(static_cast<char*>(handle) + 8, 2));
  EXPECT_TRUE(table->Stop(handle, 2));
}

TEST(NcclEvents, OddDescriptorsAreKeptBoundedAndUnknownTypesHaveNoSize) {
  auto table = std::make_unique<NcclEventTable>();
  NameTable names;
  auto* comm = table->AddComm(1, "c", 0, 2, 1, 5, 0);
  NcclCollectiveStart f;
  f.func = "AVeryLongFunctionNameThatNcclNeverUsesAtAll";
  f.datatype = nullptr;  // missing strings are left empty
  f.count = 5;
  table->Stop(table->Start(comm, f, 1, 10), 20);
  Drained d = DrainAll(*table, names);
  ASSERT_EQ(d.collectives.size(), 1u);
  EXPECT_EQ(names.TextOf(d.collectives[0].func),
            std::string(f.func).substr(0, NcclEventTable::kNameBytes - 1));
  EXPECT_EQ(d.collectives[0].datatype, 0u);
  EXPECT_EQ(d.collectives[0].type_size, 0u);
  EXPECT_EQ(d.collectives[0].rank, 0);  // the descriptor said none: the communicator's
}

TEST(NcclEvents, AFullTableDropsAndCountsAndUnfinishedEventsAreCountedAtTheEnd) {
  auto table = std::make_unique<NcclEventTable>();
  NameTable names;
  auto* comm = table->AddComm(1, "c", 0, 2, 1, 5, 0);
  std::vector<void*> running;
  for (size_t i = 0; i < NcclEventTable::kEventSlots; ++i) {
    running.push_back(table->Start(comm, AllReduce(i, 1), 1, i));
    ASSERT_NE(running.back(), nullptr) << i;
  }
  EXPECT_EQ(table->Start(comm, AllReduce(0, 1), 1, 0), nullptr);
  EXPECT_EQ(table->Start(comm, AllReduce(0, 1), 1, 0), nullptr);
  EXPECT_EQ(table->dropped(), 2u);
  for (size_t i = 0; i < 10; ++i) table->Stop(running[i], 1'000'000);
  Drained d = DrainAll(*table, names, /*final=*/true);
  EXPECT_EQ(d.collectives.size(), 10u);
  EXPECT_EQ(table->unfinished(), NcclEventTable::kEventSlots - 10);
  // Freed slots are found again.
  EXPECT_NE(table->Start(comm, AllReduce(0, 1), 1, 0), nullptr);
}

TEST(NcclEvents, TheCommunicatorTableHasALimit) {
  auto table = std::make_unique<NcclEventTable>();
  for (size_t i = 0; i < NcclEventTable::kCommSlots; ++i) {
    ASSERT_NE(table->AddComm(i, "c", 0, 2, 1, 5, 0), nullptr);
  }
  EXPECT_EQ(table->AddComm(999, "c", 0, 2, 1, 5, 0), nullptr);
}

}  // namespace
}  // namespace gpuperf::inject
