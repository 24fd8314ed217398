#include "export/parquet/parquet_file.h"

#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>

#include "export/parquet/delta_binary.h"
#include "export/parquet/rle_hybrid.h"
#include "export/parquet/thrift_compact.h"

namespace gpuperf::parquet {
namespace {

// parquet.thrift's numbers.
enum PhysicalType : int32_t { kInt64 = 2, kByteArray = 6 };
enum Repetition : int32_t { kRequired = 0, kOptional = 1 };
enum Encoding : int32_t { kPlain = 0, kRle = 3, kDeltaBinaryPacked = 5, kRleDictionary = 8 };
enum PageType : int32_t { kDataPage = 0, kDictionaryPage = 2 };
constexpr int32_t kConvertedUtf8 = 0;
constexpr int32_t kCodecZstd = 6;
// zstd's level 1: the export is bound by the CPU, and its pages still shrink several fold.
constexpr int kZstdLevel = 1;

constexpr char kMagic[] = "PAR1";

void AppendLe32(uint32_t v, std::string& out) {
  char bytes[4];
  std::memcpy(bytes, &v, 4);  // Parquet is little-endian, as the machines gpuperf runs on
  out.append(bytes, 4);
}

void AppendLe64(int64_t v, std::string& out) {
  char bytes[8];
  std::memcpy(bytes, &v, 8);
  out.append(bytes, 8);
}

// Definition levels of a nullable column: 1 bit each, length-prefixed (data page v1).
void AppendLevels(std::span<const uint8_t> present, std::string& out) {
  std::vector<uint32_t> levels(present.begin(), present.end());
  std::string encoded;
  AppendRleHybrid(levels, 1, encoded);
  AppendLe32(static_cast<uint32_t>(encoded.size()), out);
  out += encoded;
}

}  // namespace

struct ParquetFileWriter::ChunkMeta {
  bool dictionary = false;
  int32_t encoding = kPlain;  // of its data page, when not dictionary-encoded
  int64_t start = 0;          // the chunk's first page
  int64_t data_offset = 0;
  int64_t uncompressed = 0, compressed = 0;  // page headers included
  int64_t values = 0, nulls = 0;
  bool has_stats = false;
  std::string min, max;
};

struct ParquetFileWriter::RowGroupMeta {
  std::vector<ChunkMeta> chunks;
  int64_t rows = 0, offset = 0, uncompressed = 0, compressed = 0;
};

Result<std::unique_ptr<ParquetFileWriter>> ParquetFileWriter::Create(const std::string& path,
                                                                     const TableSpec& spec,
                                                                     KeyValues metadata) {
  std::FILE* file = std::fopen(path.c_str(), "wbe");
  if (file == nullptr) {
    return Error(StatusCode::kIoError, "cannot create " + path + ": " + std::strerror(errno));
  }
  std::unique_ptr<ParquetFileWriter> writer(
      new ParquetFileWriter(file, path, spec, std::move(metadata)));
  GP_RETURN_IF_ERROR(writer->Write(kMagic));
  return writer;
}

ParquetFileWriter::ParquetFileWriter(std::FILE* file, std::string path, const TableSpec& spec,
                                     KeyValues metadata)
    : file_(file), path_(std::move(path)), spec_(spec), metadata_(std::move(metadata)) {
  zstd_ = ZSTD_createCCtx();
}

ParquetFileWriter::~ParquetFileWriter() {
  if (file_ != nullptr) std::fclose(file_);
  ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_));
}

Status ParquetFileWriter::Write(const std::string& bytes) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    return Error(StatusCode::kIoError, "cannot write " + path_ + ": " + std::strerror(errno));
  }
  offset_ += bytes.size();
  return Status::Ok();
}

Status ParquetFileWriter::AppendPage(const std::string& body, bool dictionary, int32_t encoding,
                                     int32_t values, ChunkMeta& chunk, std::string& out) {
  scratch_.resize(ZSTD_compressBound(body.size()));
  const size_t compressed =
      ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_), scratch_.data(), scratch_.size(),
                        body.data(), body.size(), kZstdLevel);
  if (ZSTD_isError(compressed)) {
    return Error(StatusCode::kInternal, std::string("zstd: ") + ZSTD_getErrorName(compressed));
  }
  ThriftWriter header;
  header.I32(1, dictionary ? kDictionaryPage : kDataPage);
  header.I32(2, static_cast<int32_t>(body.size()));
  header.I32(3, static_cast<int32_t>(compressed));
  if (dictionary) {
    header.BeginStruct(7);  // DictionaryPageHeader
    header.I32(1, values);
    header.I32(2, kPlain);
  } else {
    header.BeginStruct(5);  // DataPageHeader
    header.I32(1, values);
    header.I32(2, encoding);
    header.I32(3, kRle);  // definition levels
    header.I32(4, kRle);  // repetition levels (none: the schema is flat)
  }
  header.End();
  header.End();
  chunk.uncompressed += static_cast<int64_t>(header.bytes().size() + body.size());
  chunk.compressed += static_cast<int64_t>(header.bytes().size() + compressed);
  out += header.bytes();
  out.append(scratch_.data(), compressed);
  return Status::Ok();
}

// A column chunk of the row group being filled: its data pages, encoded as their batches
// came, and what its dictionary page and statistics need once the group is complete.
struct ParquetFileWriter::PendingChunk {
  ChunkMeta meta;
  struct Page {
    std::string bytes;  // header and compressed body, when encoded already
    // An integer page holding one value, encoded at the end: as an index into a one-entry
    // dictionary when the whole chunk holds that value, else delta-encoded.
    bool single = false;
    int64_t value = 0;
    int32_t values = 0;  // not null
    int32_t rows = 0;
    std::string levels;  // nullable: its definition levels
  };
  std::vector<Page> pages;
  int64_t low = 0, high = 0;             // integers: of the values so far
  std::vector<int32_t> dictionary_slot;  // strings: pool id -> dictionary index (-1: none)
  std::vector<uint32_t> dictionary;      // strings: pool ids, in order of first use
};

Status ParquetFileWriter::AddIntPage(const ColumnData& data, size_t rows, PendingChunk& pending) {
  PendingChunk::Page page;
  page.rows = static_cast<int32_t>(rows);
  std::span<const int64_t> values = std::span(data.ints).first(rows);
  if (data.nullable) {
    present_values_.clear();
    for (size_t row = 0; row < rows; ++row) {
      if (data.present[row] != 0) present_values_.push_back(data.ints[row]);
    }
    values = present_values_;
    pending.meta.nulls += static_cast<int64_t>(rows - values.size());
    AppendLevels(std::span(data.present).first(rows), page.levels);
  }
  page.values = static_cast<int32_t>(values.size());
  if (values.empty()) {  // nothing but nulls: levels alone
    GP_RETURN_IF_ERROR(AppendPage(page.levels, false, kPlain, page.rows, pending.meta, page.bytes));
    page.levels.clear();
  } else {
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    if (!pending.meta.has_stats) {
      pending.low = *low;
      pending.high = *high;
      pending.meta.has_stats = true;
    }
    pending.low = std::min(pending.low, *low);
    pending.high = std::max(pending.high, *high);
    if (*low == *high) {
      page.single = true;
      page.value = *low;
    } else {
      // Timestamps, ids and sizes shrink best under delta encoding.
      body_ = page.levels;
      AppendDeltaBinaryPacked(values, body_);
      pending.meta.encoding = kDeltaBinaryPacked;
      GP_RETURN_IF_ERROR(
          AppendPage(body_, false, kDeltaBinaryPacked, page.rows, pending.meta, page.bytes));
      page.levels.clear();
    }
  }
  pending.pages.push_back(std::move(page));
  return Status::Ok();
}

Status ParquetFileWriter::AddStringPage(const ColumnData& data, size_t rows, const StringPool& pool,
                                        PendingChunk& pending) {
  PendingChunk::Page page;
  page.rows = static_cast<int32_t>(rows);
  body_.clear();
  size_t present = rows;
  if (data.nullable) {
    present = 0;
    for (size_t row = 0; row < rows; ++row) present += data.present[row];
    pending.meta.nulls += static_cast<int64_t>(rows - present);
    AppendLevels(std::span(data.present).first(rows), body_);
  }
  if (present == 0) {  // nothing but nulls: levels alone
    GP_RETURN_IF_ERROR(AppendPage(body_, false, kPlain, page.rows, pending.meta, page.bytes));
    pending.pages.push_back(std::move(page));
    return Status::Ok();
  }
  pending.meta.dictionary = true;
  if (pending.dictionary_slot.size() < pool.size()) {
    pending.dictionary_slot.resize(pool.size(), -1);
  }
  indexes_.clear();
  for (size_t row = 0; row < rows; ++row) {
    if (data.nullable && data.present[row] == 0) continue;
    int32_t& slot = pending.dictionary_slot[data.strings[row]];
    if (slot < 0) {
      slot = static_cast<int32_t>(pending.dictionary.size());
      pending.dictionary.push_back(data.strings[row]);
    }
    indexes_.push_back(static_cast<uint32_t>(slot));
  }
  const uint32_t width = BitWidth(pending.dictionary.size() - 1);
  body_.push_back(static_cast<char>(width));
  AppendRleHybrid(indexes_, width, body_);
  GP_RETURN_IF_ERROR(AppendPage(body_, false, kRleDictionary, page.rows, pending.meta, page.bytes));
  pending.pages.push_back(std::move(page));
  return Status::Ok();
}

Status ParquetFileWriter::AddPage(const TableBatch& batch) {
  if (batch.rows == 0) return Status::Ok();
  pool_ = batch.pool;
  pending_.resize(spec_.columns.size());
  for (size_t c = 0; c < spec_.columns.size(); ++c) {
    if (spec_.columns[c].type == ColumnType::kInt64) {
      GP_RETURN_IF_ERROR(AddIntPage(batch.columns[c], batch.rows, pending_[c]));
    } else {
      GP_RETURN_IF_ERROR(AddStringPage(batch.columns[c], batch.rows, *batch.pool, pending_[c]));
    }
  }
  pending_rows_ += batch.rows;
  if (pending_rows_ >= kRowGroupRows) return WriteRowGroup();
  return Status::Ok();
}

Status ParquetFileWriter::WriteRowGroup() {
  if (pending_rows_ == 0) return Status::Ok();
  RowGroupMeta group;
  group.rows = static_cast<int64_t>(pending_rows_);
  group.offset = static_cast<int64_t>(offset_);
  std::string pages;
  for (size_t c = 0; c < spec_.columns.size(); ++c) {
    PendingChunk& pending = pending_[c];
    ChunkMeta& chunk = pending.meta;
    chunk.start = static_cast<int64_t>(offset_);
    chunk.values = group.rows;
    pages.clear();
    if (spec_.columns[c].type == ColumnType::kInt64) {
      if (chunk.has_stats) {
        AppendLe64(pending.low, chunk.min);
        AppendLe64(pending.high, chunk.max);
      }
      // A chunk of one value (the host, pid and rank of a file, a kernel's launch
      // configuration) is a dictionary of one entry and a single run per page.
      chunk.dictionary = chunk.has_stats && pending.low == pending.high;
      if (chunk.dictionary) {
        body_.clear();
        AppendLe64(pending.low, body_);
        GP_RETURN_IF_ERROR(AppendPage(body_, true, kPlain, 1, chunk, pages));
      }
      for (PendingChunk::Page& page : pending.pages) {
        if (!page.single) continue;
        body_ = page.levels;
        if (chunk.dictionary) {
          body_.push_back(1);  // the indices' bit width
          AppendRleRun(0, static_cast<size_t>(page.values), 1, body_);
        } else {
          const std::vector<int64_t> same(static_cast<size_t>(page.values), page.value);
          AppendDeltaBinaryPacked(same, body_);
          chunk.encoding = kDeltaBinaryPacked;
        }
        GP_RETURN_IF_ERROR(AppendPage(body_, false,
                                      chunk.dictionary ? kRleDictionary : kDeltaBinaryPacked,
                                      page.rows, chunk, page.bytes));
      }
    } else if (!pending.dictionary.empty()) {
      body_.clear();
      std::string_view low = (*pool_)[pending.dictionary[0]], high = low;
      for (uint32_t id : pending.dictionary) {
        const std::string_view text = (*pool_)[id];
        AppendLe32(static_cast<uint32_t>(text.size()), body_);
        body_.append(text);
        low = std::min(low, text);  // byte-wise: the order Parquet defines for UTF-8
        high = std::max(high, text);
        pending.dictionary_slot[id] = -1;
      }
      chunk.has_stats = true;
      chunk.min = low;
      chunk.max = high;
      GP_RETURN_IF_ERROR(AppendPage(body_, true, kPlain,
                                    static_cast<int32_t>(pending.dictionary.size()), chunk, pages));
    }
    chunk.data_offset = chunk.start + static_cast<int64_t>(pages.size());
    for (const PendingChunk::Page& page : pending.pages) pages += page.bytes;
    GP_RETURN_IF_ERROR(Write(pages));
    group.uncompressed += chunk.uncompressed;
    group.compressed += chunk.compressed;
    group.chunks.push_back(std::move(chunk));
    pending.meta = ChunkMeta();
    pending.pages.clear();
    pending.dictionary.clear();
  }
  rows_ += pending_rows_;
  pending_rows_ = 0;
  row_groups_.push_back(std::move(group));
  return Status::Ok();
}

Status ParquetFileWriter::Close() {
  GP_RETURN_IF_ERROR(WriteRowGroup());
  ThriftWriter meta;  // FileMetaData
  meta.I32(1, 1);     // version
  meta.BeginList(2, ThriftType::kStruct, spec_.columns.size() + 1);
  meta.BeginListStruct();  // the root: a group of every column
  meta.Binary(4, "schema");
  meta.I32(5, static_cast<int32_t>(spec_.columns.size()));
  meta.End();
  for (const ColumnSpec& column : spec_.columns) {
    meta.BeginListStruct();
    const bool text = column.type == ColumnType::kString;
    meta.I32(1, text ? kByteArray : kInt64);
    meta.I32(3, column.nullable ? kOptional : kRequired);
    meta.Binary(4, column.name);
    if (text) {
      meta.I32(6, kConvertedUtf8);
      meta.BeginStruct(10);  // LogicalType
      meta.BeginStruct(1);   // STRING
      meta.End();
      meta.End();
    }
    meta.End();
  }
  meta.I64(3, static_cast<int64_t>(rows_));
  meta.BeginList(4, ThriftType::kStruct, row_groups_.size());
  for (size_t g = 0; g < row_groups_.size(); ++g) {
    const RowGroupMeta& group = row_groups_[g];
    meta.BeginListStruct();
    meta.BeginList(1, ThriftType::kStruct, group.chunks.size());
    for (size_t c = 0; c < group.chunks.size(); ++c) {
      const ChunkMeta& chunk = group.chunks[c];
      const ColumnSpec& column = spec_.columns[c];
      meta.BeginListStruct();  // ColumnChunk
      meta.I64(2, chunk.start);
      meta.BeginStruct(3);  // ColumnMetaData
      meta.I32(1, column.type == ColumnType::kString ? kByteArray : kInt64);
      std::vector<int32_t> encodings = {kPlain, kRle};
      if (chunk.dictionary) encodings.push_back(kRleDictionary);
      if (chunk.encoding != kPlain) encodings.push_back(chunk.encoding);
      meta.BeginList(2, ThriftType::kI32, encodings.size());
      for (int32_t e : encodings) meta.ListI32(e);
      meta.BeginList(3, ThriftType::kBinary, 1);
      meta.ListBinary(column.name);
      meta.I32(4, kCodecZstd);
      meta.I64(5, chunk.values);
      meta.I64(6, chunk.uncompressed);
      meta.I64(7, chunk.compressed);
      meta.I64(9, chunk.data_offset);
      if (chunk.dictionary) meta.I64(11, chunk.start);
      meta.BeginStruct(12);  // Statistics
      meta.I64(3, chunk.nulls);
      if (chunk.has_stats) {
        meta.Binary(5, chunk.max);
        meta.Binary(6, chunk.min);
      }
      meta.End();
      meta.End();
      meta.End();
    }
    meta.I64(2, group.uncompressed);
    meta.I64(3, group.rows);
    meta.I64(5, group.offset);
    meta.I64(6, group.compressed);
    meta.I16(7, static_cast<int16_t>(std::min<size_t>(g, INT16_MAX)));
    meta.End();
  }
  meta.BeginList(5, ThriftType::kStruct, metadata_.size());
  for (const auto& [key, value] : metadata_) {
    meta.BeginListStruct();
    meta.Binary(1, key);
    meta.Binary(2, value);
    meta.End();
  }
  meta.Binary(6, "gpuperf version " GPUPERF_VERSION);
  meta.BeginList(7, ThriftType::kStruct, spec_.columns.size());
  for (size_t c = 0; c < spec_.columns.size(); ++c) {
    meta.BeginListStruct();  // ColumnOrder
    meta.BeginStruct(1);     // TYPE_ORDER
    meta.End();
    meta.End();
  }
  meta.End();
  std::string tail = meta.Take();
  AppendLe32(static_cast<uint32_t>(tail.size()), tail);
  tail += kMagic;
  GP_RETURN_IF_ERROR(Write(tail));
  std::FILE* file = file_;
  file_ = nullptr;
  if (std::fclose(file) != 0) {
    return Error(StatusCode::kIoError, "cannot write " + path_ + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace gpuperf::parquet
