#include "analyze/dataset/table_batch.h"

#include <algorithm>

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
  for (size_t c = 0; c < columns.size(); ++c) columns[c].nullable = table.columns[c].nullable;
  rows = 0;
  capacity_ = 0;
}

void TableBatch::Grow(size_t row) {
  capacity_ = std::max<size_t>({row + 1, 2 * capacity_, 256});
  for (size_t c = 0; c < columns.size(); ++c) {
    ColumnData& column = columns[c];
    if (spec->columns[c].type == ColumnType::kString) {
      column.strings.resize(capacity_);
    } else {
      column.ints.resize(capacity_);
    }
    if (column.nullable) column.present.resize(capacity_);
  }
}

}  // namespace gpuperf
