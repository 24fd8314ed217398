// One Parquet file of one table (apache/parquet-format): "PAR1", then row groups of
// kRowGroupRows rows (the last one fewer), each column a chunk of zstd-compressed pages, a
// data page per batch added (strings: a PLAIN dictionary page of the chunk, then
// RLE_DICTIONARY data pages; integers: DELTA_BINARY_PACKED data pages, or a one-entry
// dictionary when the chunk holds one value; nullable columns with definition levels), then the
// Thrift compact FileMetaData with the schema, every chunk's statistics (min, max, null count) and
// key/value metadata, its length and "PAR1". A writer of our own: Debian has no Parquet library,
// and this is all gpuperf needs of the format.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyze/dataset/table_batch.h"
#include "gpuperf/status.h"

namespace gpuperf::parquet {

using KeyValues = std::vector<std::pair<std::string, std::string>>;

class ParquetFileWriter {
 public:
  static Result<std::unique_ptr<ParquetFileWriter>> Create(const std::string& path,
                                                           const TableSpec& spec,
                                                           KeyValues metadata);
  ~ParquetFileWriter();

  // Rows per row group: DuckDB's own row group size, large enough for engines to skip by
  // statistics.
  static constexpr size_t kRowGroupRows = 122'880;

  // Encodes `batch` (of this writer's table) as one data page of each column, at once, while
  // its columns are still in the cache; the row group is written when it holds
  // kRowGroupRows rows (batches should divide it). Empty batches add nothing.
  Status AddPage(const TableBatch& batch);
  // Writes the last row group, the footer, and closes the file.
  Status Close();

  uint64_t rows() const { return rows_; }
  uint64_t bytes_written() const { return offset_; }

  struct ChunkMeta;
  struct RowGroupMeta;
  struct PendingChunk;

 private:
  ParquetFileWriter(std::FILE* file, std::string path, const TableSpec& spec, KeyValues metadata);
  Status Write(const std::string& bytes);
  // Compresses `body` and appends it after its header to `out`; adds to the chunk's sizes.
  Status AppendPage(const std::string& body, bool dictionary, int32_t encoding, int32_t values,
                    ChunkMeta& chunk, std::string& out);
  Status AddIntPage(const ColumnData& data, size_t rows, PendingChunk& pending);
  Status AddStringPage(const ColumnData& data, size_t rows, const StringPool& pool,
                       PendingChunk& pending);
  // Writes the pending row group's chunks, each its dictionary page first.
  Status WriteRowGroup();

  std::FILE* file_;
  std::string path_;
  const TableSpec& spec_;
  KeyValues metadata_;
  uint64_t offset_ = 0;
  uint64_t rows_ = 0;
  std::vector<RowGroupMeta> row_groups_;
  std::vector<PendingChunk> pending_;  // the row group being filled, by column
  size_t pending_rows_ = 0;
  const StringPool* pool_ = nullptr;  // of the batches added
  void* zstd_ = nullptr;              // ZSTD_CCtx
  std::string scratch_;
  // Reused from page to page.
  std::string body_;
  std::vector<int64_t> present_values_;
  std::vector<uint32_t> indexes_;
};

}  // namespace gpuperf::parquet
