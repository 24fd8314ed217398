// Rows of a table, column by column: what the dataset analysis (dataset_builder.h) hands to
// a writer (export/parquet/), which only serializes them. A column is 64-bit integers or
// strings; strings are ids into a pool shared by the batches of one trace file, so a writer
// dictionary-encodes them without hashing a string per row.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuperf {

enum class ColumnType : uint8_t { kInt64, kString };

struct ColumnSpec {
  std::string_view name;
  ColumnType type = ColumnType::kInt64;
  bool nullable = false;  // may hold nulls (Parquet: OPTIONAL, with definition levels)
};

struct TableSpec {
  std::string_view name;
  std::span<const ColumnSpec> columns;
};

// Strings by id; id 0 is "". Ids stay valid as the pool grows.
class StringPool {
 public:
  StringPool() : strings_{std::string()} {}
  uint32_t Intern(std::string_view text);
  std::string_view operator[](uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }

 private:
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> index_;
};

struct ColumnData {
  std::vector<int64_t> ints;      // kInt64: one per row (0 where null)
  std::vector<uint32_t> strings;  // kString: pool ids, one per row (0 where null)
  std::vector<uint8_t> present;   // nullable columns: 1 per row with a value, 0 for null
};

struct TableBatch {
  const TableSpec* spec = nullptr;
  const StringPool* pool = nullptr;
  std::vector<ColumnData> columns;  // as spec->columns
  size_t rows = 0;

  void Reset(const TableSpec& table, const StringPool& strings);
  void Clear();
};

// Appends one row to a batch, column after column in the spec's order.
class RowAppender {
 public:
  // Counts the row at once: the caller fills every column before the next row begins.
  explicit RowAppender(TableBatch& batch) : batch_(batch) { ++batch_.rows; }
  RowAppender& operator=(const RowAppender&) = delete;
  RowAppender& Int(int64_t value);
  RowAppender& Str(uint32_t pool_id);
  RowAppender& Null();
  // A value, or null when `has` is false.
  RowAppender& IntOrNull(bool has, int64_t value) { return has ? Int(value) : Null(); }
  RowAppender& StrOrNull(bool has, uint32_t pool_id) { return has ? Str(pool_id) : Null(); }

 private:
  ColumnData& Next();
  TableBatch& batch_;
  size_t column_ = 0;
};

}  // namespace gpuperf
