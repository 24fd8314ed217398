#include "export/protobuf_writer.h"

#include <cstring>

namespace gpuperf {

void ProtoWriter::Fixed64(uint32_t field, uint64_t value) {
  char bytes[kMaxVarintBytes + 8];
  size_t n = EncodeVarint((field << 3) | kWireFixed64, bytes);
  for (int i = 0; i < 8; ++i) bytes[n++] = static_cast<char>((value >> (8 * i)) & 0xff);
  out_.append(bytes, n);
}

void ProtoWriter::Double(uint32_t field, double value) {
  uint64_t bits;
  static_assert(sizeof(bits) == sizeof(value));
  std::memcpy(&bits, &value, sizeof(bits));
  Fixed64(field, bits);
}

void ProtoWriter::PackedVarints(uint32_t field, std::span<const uint64_t> values) {
  if (values.empty()) return;
  size_t length = 0;
  for (uint64_t value : values) length += VarintSize(value);
  Tag(field, kWireLengthDelimited);
  AppendVarint(length);
  for (uint64_t value : values) AppendVarint(value);
}

void ProtoWriter::EndNested(Nested nested) {
  const size_t body_start = nested.length_at + 1;
  const size_t length = out_.size() - body_start;
  const size_t length_bytes = VarintSize(length);
  if (length_bytes > 1) {
    // Make room for the longer length varint: shift the body right.
    out_.insert(body_start, length_bytes - 1, '\0');
  }
  size_t at = nested.length_at;
  uint64_t value = length;
  while (value >= 0x80) {
    out_[at++] = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  out_[at] = static_cast<char>(value);
}

}  // namespace gpuperf
