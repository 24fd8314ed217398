#include "analyze/dataset/table_batch.h"

namespace gpuperf {

uint32_t StringPool::Intern(std::string_view text) {
  if (text.empty()) return 0;
  auto [it, inserted] =
      index_.try_emplace(std::string(text), static_cast<uint32_t>(strings_.size()));
  if (inserted) strings_.emplace_back(text);
  return it->second;
}

void TableBatch::Reset(const TableSpec& table, const StringPool& strings) {
  spec = &table;
  pool = &strings;
  columns.assign(table.columns.size(), ColumnData());
  rows = 0;
}

void TableBatch::Clear() {
  for (ColumnData& c : columns) {
    c.ints.clear();
    c.strings.clear();
    c.present.clear();
  }
  rows = 0;
}

ColumnData& RowAppender::Next() {
  ColumnData& column = batch_.columns[column_];
  if (batch_.spec->columns[column_].nullable) column.present.push_back(1);
  ++column_;
  return column;
}

RowAppender& RowAppender::Int(int64_t value) {
  Next().ints.push_back(value);
  return *this;
}

RowAppender& RowAppender::Str(uint32_t pool_id) {
  Next().strings.push_back(pool_id);
  return *this;
}

RowAppender& RowAppender::Null() {
  ColumnData& column = batch_.columns[column_];
  column.present.push_back(0);
  if (batch_.spec->columns[column_].type == ColumnType::kString) {
    column.strings.push_back(0);
  } else {
    column.ints.push_back(0);
  }
  ++column_;
  return *this;
}

}  // namespace gpuperf
