// Rows of a table, column by column: what the dataset analysis (dataset.h, part_builder.h) hands to
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

// A column of a batch. Its vectors are sized to the batch's capacity, not its rows: a row is
// stored in place, without a vector growing a value at a time (a job writes hundreds of
// millions of rows of thirty columns). Only the first TableBatch::rows entries count.
struct ColumnData {
  std::vector<int64_t> ints;      // kInt64: one per row (0 where null)
  std::vector<uint32_t> strings;  // kString: pool ids, one per row (0 where null)
  std::vector<uint8_t> present;   // nullable columns: 1 per row with a value, 0 for null
  bool nullable = false;
};

struct TableBatch {
  const TableSpec* spec = nullptr;
  const StringPool* pool = nullptr;
  std::vector<ColumnData> columns;  // as spec->columns
  size_t rows = 0;

  void Reset(const TableSpec& table, const StringPool& strings);
  void Clear() { rows = 0; }
  // Makes room for row `row` (doubling).
  void Reserve(size_t row) {
    if (row >= capacity_) Grow(row);
  }

 private:
  void Grow(size_t row);
  size_t capacity_ = 0;
};

// Appends one row to a batch, column after column in the spec's order.
class RowAppender {
 public:
  // Counts the row at once: the caller fills every column before the next row begins.
  explicit RowAppender(TableBatch& batch) : row_(batch.rows++) {
    batch.Reserve(row_);
    next_ = batch.columns.data();
  }
  RowAppender& operator=(const RowAppender&) = delete;
  // Always inline: a row of a kernel is thirty of these, and a job has hundreds of millions
  // (the compiler left the chain of calls out of line, at a tenth of the export's time).
  [[gnu::always_inline]] RowAppender& Int(int64_t value) {
    Next().ints[row_] = value;
    return *this;
  }
  [[gnu::always_inline]] RowAppender& Str(uint32_t pool_id) {
    Next().strings[row_] = pool_id;
    return *this;
  }
  RowAppender& Null() {
    ColumnData& column = *next_++;
    column.present[row_] = 0;
    if (!column.ints.empty()) column.ints[row_] = 0;
    if (!column.strings.empty()) column.strings[row_] = 0;
    return *this;
  }
  // A value, or null when `has` is false.
  RowAppender& IntOrNull(bool has, int64_t value) { return has ? Int(value) : Null(); }
  RowAppender& StrOrNull(bool has, uint32_t pool_id) { return has ? Str(pool_id) : Null(); }

 private:
  [[gnu::always_inline]] ColumnData& Next() {
    ColumnData& column = *next_++;
    if (column.nullable) column.present[row_] = 1;
    return column;
  }
  const size_t row_;
  ColumnData* next_;  // the column the next value goes to
};

}  // namespace gpuperf
