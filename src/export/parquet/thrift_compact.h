// Thrift's compact protocol, the encoding of Parquet's metadata (the file footer and every
// page header): only what a writer of Parquet needs. Fields are written in increasing id
// order inside a struct; a field id is sent as the difference to the previous one when that
// fits four bits. Integers are zigzag varints, binaries a varint length and the bytes,
// lists a header of size and element type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuperf::parquet {

// Compact protocol type codes (in a field header and a list header).
enum class ThriftType : uint8_t {
  kBoolTrue = 1,
  kBoolFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

class ThriftWriter {
 public:
  // Fields of the struct being written.
  void I16(int16_t id, int16_t value) { Integer(id, ThriftType::kI16, value); }
  void I32(int16_t id, int32_t value) { Integer(id, ThriftType::kI32, value); }
  void I64(int16_t id, int64_t value) { Integer(id, ThriftType::kI64, value); }
  void Bool(int16_t id, bool value);
  void Binary(int16_t id, std::string_view bytes);
  // A nested struct field: its fields follow, then End().
  void BeginStruct(int16_t id);
  // The header of a list field of `size` elements of `element` type; the elements follow:
  // ListI32/ListBinary values, or BeginListStruct()...End() for each struct element.
  void BeginList(int16_t id, ThriftType element, size_t size);
  void ListI32(int32_t value) { Varint(ZigZag(value)); }
  void ListBinary(std::string_view bytes);
  void BeginListStruct();
  // Ends the struct begun last (or the top-level one, when nothing is open).
  void End();

  const std::string& bytes() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  static uint64_t ZigZag(int64_t v) {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  }
  void Varint(uint64_t v);
  void FieldHeader(int16_t id, ThriftType type);
  void Integer(int16_t id, ThriftType type, int64_t value);

  std::string out_;
  int16_t last_id_ = 0;
  std::vector<int16_t> outer_ids_;  // the last field id of each enclosing struct
};

}  // namespace gpuperf::parquet
