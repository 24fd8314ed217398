// One Parquet file of one table (apache/parquet-format): "PAR1", then per batch one row
// group, each column a chunk of zstd-compressed pages (strings: a PLAIN dictionary page and
// an RLE_DICTIONARY data page; integers: a PLAIN data page; nullable columns with definition
// levels), then the Thrift compact FileMetaData with the schema, every chunk's statistics
// (min, max, null count) and key/value metadata, its length and "PAR1". A writer of our own:
// Debian has no Parquet library, and this is all gpuperf needs of the format.
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

  // Writes `batch` (of this writer's table) as one row group; empty batches write nothing.
  Status WriteRowGroup(const TableBatch& batch);
  // Writes the footer and closes the file.
  Status Close();

  uint64_t rows() const { return rows_; }
  uint64_t bytes_written() const { return offset_; }

  struct ChunkMeta;
  struct RowGroupMeta;

 private:
  ParquetFileWriter(std::FILE* file, std::string path, const TableSpec& spec, KeyValues metadata);
  Status Write(const std::string& bytes);
  // Compresses `body` and writes it after its header; adds to the chunk's sizes.
  Status WritePage(const std::string& body, bool dictionary, int32_t values, ChunkMeta& chunk);

  std::FILE* file_;
  std::string path_;
  const TableSpec& spec_;
  KeyValues metadata_;
  uint64_t offset_ = 0;
  uint64_t rows_ = 0;
  std::vector<RowGroupMeta> row_groups_;
  void* zstd_ = nullptr;  // ZSTD_CCtx
  std::string scratch_;
};

}  // namespace gpuperf::parquet
