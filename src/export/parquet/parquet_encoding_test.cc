#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "export/parquet/delta_binary.h"
#include "export/parquet/parquet_file.h"
#include "export/parquet/rle_hybrid.h"
#include "export/parquet/thrift_compact.h"
#include "support/hex_bytes.h"
#include "support/temp_dir.h"

namespace gpuperf::parquet {
namespace {

std::string Hex(const std::string& bytes) {
  return testing::HexBytes(bytes);
}

TEST(ThriftWriter, FieldsFollowTheCompactProtocol) {
  ThriftWriter w;
  w.I32(1, 1);       // delta 1, type i32 (5); zigzag 1 = 2
  w.I64(3, -1);      // delta 2, type i64 (6); zigzag -1 = 1
  w.I32(20, 300);    // delta 17 > 15: type byte, then the id as a zigzag varint (40)
  w.Bool(21, true);  // the value is the type: 1 true
  w.Binary(22, "ab");
  w.End();
  EXPECT_EQ(Hex(w.bytes()),
            "1502"
            "2601"
            "0528d804"
            "11"
            "18026162"
            "00");
}

TEST(ThriftWriter, NestedStructsAndListsRestoreTheOuterFieldIds) {
  ThriftWriter w;
  w.I32(4, 7);
  w.BeginStruct(5);  // delta 1, type struct (12)
  w.I32(1, 0);       // ids restart at 0 inside
  w.End();
  w.BeginList(6, ThriftType::kI32, 2);  // delta 1 from 5 again: the struct's ids were its own
  w.ListI32(1);
  w.ListI32(-1);
  w.BeginList(7, ThriftType::kStruct, 20);  // 15 or more: size as a varint after 0xf_
  w.End();
  EXPECT_EQ(Hex(w.bytes()),
            "450e"
            "1c"
            "1500"
            "00"
            "19"
            "25"
            "02"
            "01"
            "19"
            "fc14"
            "00");
}

TEST(RleHybrid, BitPacksShortRunsLeastSignificantBitFirst) {
  // Encodings.md's example: 0..7 with bit width 3 pack into 10001000 11000110 11111010.
  std::string out;
  const uint32_t values[] = {0, 1, 2, 3, 4, 5, 6, 7};
  AppendRleHybrid(values, 3, out);
  EXPECT_EQ(Hex(out),
            "03"
            "88c6fa");
}

TEST(RleHybrid, RunsOfEightOrMoreAreOneRun) {
  std::string out;
  std::vector<uint32_t> values(10, 5);
  values.push_back(1);  // a tail shorter than a group is padded to 8 values with zeros
  AppendRleHybrid(values, 3, out);
  EXPECT_EQ(Hex(out),
            "1405"
            "03"
            "010000");
  out.clear();
  std::vector<uint32_t> wide(300, 258);  // two bytes for a value of width 9; header 300 << 1
  AppendRleHybrid(wide, 9, out);
  EXPECT_EQ(Hex(out), "d8040201");
}

TEST(RleHybrid, BitWidthCoversTheLargestValue) {
  EXPECT_EQ(BitWidth(0), 1u);
  EXPECT_EQ(BitWidth(1), 1u);
  EXPECT_EQ(BitWidth(2), 2u);
  EXPECT_EQ(BitWidth(255), 8u);
  EXPECT_EQ(BitWidth(256), 9u);
}

TEST(DeltaBinaryPacked, EncodingsMdExamples) {
  // 1..5: header (block 128, 4 miniblocks, 5 values, first 1), min delta 1, widths all 0.
  std::string out;
  const int64_t rising[] = {1, 2, 3, 4, 5};
  AppendDeltaBinaryPacked(rising, out);
  EXPECT_EQ(Hex(out),
            "8001040502"
            "02"
            "00000000");
  // 7 5 3 1 2 3 4 5: deltas -2 -2 -2 1 1 1 1, min -2, so 0 0 0 3 3 3 3 at width 2: the
  // first miniblock's 32 values in 8 bytes, the other three not written.
  out.clear();
  const int64_t dip[] = {7, 5, 3, 1, 2, 3, 4, 5};
  AppendDeltaBinaryPacked(dip, out);
  EXPECT_EQ(Hex(out),
            "800104080e"
            "03"
            "02000000"
            "c03f000000000000");
}

TEST(DeltaBinaryPacked, WideDifferencesWrapAroundAndSpanWords) {
  // INT64_MIN after INT64_MAX: a difference of 1 modulo 2^64; then one of 2^63 - 1 back.
  std::string out;
  const int64_t values[] = {INT64_MAX, INT64_MIN, -1};
  AppendDeltaBinaryPacked(values, out);
  // min delta 1 (zigzag 2); deltas - min: 0, 2^63 - 2 -> width 63, 32 x 63 bits = 252 bytes.
  EXPECT_EQ(Hex(out.substr(0, 14)),
            "80010403feffffffffffffffff01"
            "");
  EXPECT_EQ(Hex(out.substr(14, 5)), "023f000000");
  EXPECT_EQ(out.size(), 14u + 5u + 252u);
  // The second value, 2^63 - 2, packed after the first's 63 zero bits.
  const std::string body = out.substr(19);
  uint64_t bits_63_to_126[2];
  std::memcpy(bits_63_to_126, body.data(), 16);
  const unsigned __int128 packed =
      (static_cast<unsigned __int128>(bits_63_to_126[1]) << 64) | bits_63_to_126[0];
  EXPECT_EQ(static_cast<uint64_t>(packed >> 63) & ((uint64_t{1} << 63) - 1),
            (uint64_t{1} << 63) - 2);
}

TEST(ParquetFileWriter, FileIsFramedByMagicAndFooterLength) {
  testing::TempDir dir;
  const std::string path = dir.File("t.parquet");
  static constexpr ColumnSpec kColumns[] = {{"n", ColumnType::kInt64},
                                            {"s", ColumnType::kString, true}};
  const TableSpec spec{"t", kColumns};
  StringPool pool;
  TableBatch batch;
  batch.Reset(spec, pool);
  RowAppender(batch).Int(3).Str(pool.Intern("x"));
  RowAppender(batch).Int(-4).Null();
  auto writer = ParquetFileWriter::Create(path, spec, {{"k", "v"}});
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  ASSERT_TRUE((*writer)->AddPage(batch).ok());
  ASSERT_TRUE((*writer)->Close().ok());
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 12u);
  EXPECT_EQ(bytes.substr(0, 4), "PAR1");
  EXPECT_EQ(bytes.substr(bytes.size() - 4), "PAR1");
  uint32_t footer = 0;
  std::memcpy(&footer, bytes.data() + bytes.size() - 8, 4);
  ASSERT_LT(footer, bytes.size() - 12);
  const std::string meta = bytes.substr(bytes.size() - 8 - footer, footer);
  // FileMetaData: version 1, then a list of 3 schema elements, the root named "schema".
  EXPECT_EQ(Hex(meta.substr(0, 4)),
            "1502"
            "193c");
  EXPECT_NE(meta.find("schema"), std::string::npos);
  EXPECT_NE(meta.find("gpuperf version"), std::string::npos);
  EXPECT_EQ((*writer)->rows(), 2u);
}

}  // namespace
}  // namespace gpuperf::parquet
