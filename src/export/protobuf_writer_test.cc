#include "export/protobuf_writer.h"

#include <gtest/gtest.h>
#include "support/hex_bytes.h"

namespace gpuperf {
namespace {

std::string Hex(const std::string& bytes) {
  return testing::HexBytes(bytes);
}

TEST(ProtoWriter, VarintsFollowTheWireFormat) {
  std::string out;
  ProtoWriter w(out);
  w.Varint(1, 150);  // the protobuf documentation's example: 08 96 01
  EXPECT_EQ(Hex(out), "089601");
  out.clear();
  w.Varint(47, 1);  // field numbers above 15 take a two-byte tag
  EXPECT_EQ(Hex(out), "f80201");
  out.clear();
  w.Int(12, -1);  // negative int32/int64: ten bytes
  EXPECT_EQ(Hex(out), "60ffffffffffffffffff01");
}

TEST(ProtoWriter, Fixed64IsLittleEndian) {
  std::string out;
  ProtoWriter w(out);
  w.Fixed64(47, 0x0102030405060708ull);
  EXPECT_EQ(Hex(out), "f9020807060504030201");
}

TEST(ProtoWriter, NestedMessagesGetTheirLength) {
  std::string out;
  ProtoWriter w(out);
  auto outer = w.BeginNested(1);
  w.Bytes(2, "hi");
  auto inner = w.BeginNested(3);
  w.Varint(4, 5);
  w.EndNested(inner);
  w.EndNested(outer);
  EXPECT_EQ(Hex(out),
            "0a08"
            "12026869"
            "1a02"
            "2005");
}

TEST(ProtoWriter, LongNestedBodiesShiftForTheirLengthVarint) {
  std::string out;
  ProtoWriter w(out);
  auto outer = w.BeginNested(1);
  auto inner = w.BeginNested(2);
  w.Bytes(3, std::string(200, 'x'));  // 3 + 200 bytes: length needs two bytes
  w.EndNested(inner);
  w.Varint(4, 1);
  w.EndNested(outer);
  // outer: tag, len(2 bytes); inner: tag, len(2 bytes), 0x1a, 0xc8 0x01, 200 x; 0x20 0x01
  ASSERT_EQ(out.size(), 1 + 2 + 1 + 2 + 1 + 2 + 200 + 2);
  EXPECT_EQ(Hex(out.substr(0, 8)), "0ad00112cb011ac8");
  EXPECT_EQ(Hex(out.substr(out.size() - 2)), "2001");
}

TEST(ProtoWriter, PackedVarintsShareOneLength) {
  std::string out;
  ProtoWriter w(out);
  const uint64_t values[] = {3, 270, 86942};  // the documentation's packed example
  w.PackedVarints(4, values);
  EXPECT_EQ(Hex(out), "2206038e029ea705");
  out.clear();
  w.PackedVarints(4, {});  // an empty repeated field is absent, not an empty run
  EXPECT_EQ(out, "");
}

}  // namespace
}  // namespace gpuperf
