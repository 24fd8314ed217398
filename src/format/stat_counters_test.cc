// The one fold of recorded counters (include/gpuperf/stats.h), which `record`'s summary
// and `report` both use.
#include <gtest/gtest.h>

#include "gpuperf/stats.h"

namespace gpuperf {
namespace {

TEST(StatCountersTest, AProcessCounterIsItsLargestSnapshotInAnyOrder) {
  const uint32_t dropped = static_cast<uint32_t>(StatId::cupti_dropped_records);
  StatCounters in_order, reversed;
  for (uint64_t snapshot : {3, 7, 12}) in_order.Fold(dropped, snapshot);
  for (uint64_t snapshot : {12, 7, 3}) reversed.Fold(dropped, snapshot);
  EXPECT_EQ(in_order[StatId::cupti_dropped_records], 12u);
  EXPECT_EQ(reversed[StatId::cupti_dropped_records], 12u);
  EXPECT_EQ(in_order[StatId::writer_queue_full], 0u);
}

TEST(StatCountersTest, ProcessesAddUp) {
  StatCounters a, b, all;
  a.Fold(static_cast<uint32_t>(StatId::callbacks), 10);
  a.Fold(static_cast<uint32_t>(StatId::callbacks), 25);
  b.Fold(static_cast<uint32_t>(StatId::callbacks), 5);
  all += a;
  all += b;
  EXPECT_EQ(all[StatId::callbacks], 30u);
}

TEST(StatCountersTest, IdsOfANewerGpuperfBeyondTheTableAreIgnored) {
  StatCounters c;
  c.Fold(kStatSlots, 99);
  c.Fold(~0u, 99);
  for (uint64_t value : c.values) EXPECT_EQ(value, 0u);
}

}  // namespace
}  // namespace gpuperf
