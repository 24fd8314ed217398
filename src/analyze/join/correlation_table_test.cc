#include "analyze/join/correlation_table.h"

#include <gtest/gtest.h>

namespace gpuperf {
namespace {

using Table = CorrelationTable<uint32_t>;

TEST(CorrelationTable, EntriesStartAtZeroAndKeepWhatWasWritten) {
  Table table;
  table.At(10, 1) = 7;
  EXPECT_EQ(table.At(10, 1), 7u);
  EXPECT_EQ(table.At(10, 2), 0u);  // same page, never written
  ASSERT_NE(table.Find(10, 1), nullptr);
  EXPECT_EQ(*table.Find(10, 1), 7u);
}

TEST(CorrelationTable, FindMakesNothing) {
  Table table;
  EXPECT_EQ(table.Find(10, 1), nullptr);
  EXPECT_EQ(table.bytes(), 0u);
  table.At(10, 1) = 1;
  EXPECT_EQ(table.Find(10, Table::kPageSize), nullptr);  // the next page
  EXPECT_EQ(table.Find(11, 1), nullptr);                 // another process
  EXPECT_EQ(table.bytes(), Table::kPageSize * sizeof(uint32_t));
}

TEST(CorrelationTable, ProcessesWithTheSameIdsStayApart) {
  Table table;
  table.At(10, 5) = 1;
  table.At(20, 5) = 2;
  table.At(10, 5) += 10;
  EXPECT_EQ(*table.Find(10, 5), 11u);
  EXPECT_EQ(*table.Find(20, 5), 2u);
}

TEST(CorrelationTable, SparseIdsCostAPageEach) {
  Table table;
  table.At(1, 0xffffffffu) = 3;
  table.At(1, Table::kPageSize - 1) = 4;
  table.At(1, Table::kPageSize) = 5;
  EXPECT_EQ(table.bytes(), 3 * Table::kPageSize * sizeof(uint32_t));
  EXPECT_EQ(*table.Find(1, 0xffffffffu), 3u);
  EXPECT_EQ(*table.Find(1, Table::kPageSize - 1), 4u);
  EXPECT_EQ(*table.Find(1, Table::kPageSize), 5u);
}

TEST(CorrelationTable, ConstLookupsSeeEveryPage) {
  Table table;
  table.At(1, 1) = 1;
  table.At(2, 1) = 2;  // the cache now holds process 2's page
  const Table& reader = table;
  ASSERT_NE(reader.Find(1, 1), nullptr);
  EXPECT_EQ(*reader.Find(1, 1), 1u);
  EXPECT_EQ(*reader.Find(2, 1), 2u);
  EXPECT_EQ(reader.Find(3, 1), nullptr);
}

}  // namespace
}  // namespace gpuperf
