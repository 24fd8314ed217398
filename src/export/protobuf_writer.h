// A minimal protobuf wire-format encoder: varints, fixed64, length-delimited fields and
// nested messages, appended to a byte string. Written for exporters that stream millions
// of small messages (Perfetto packets, pprof samples) without a protobuf library.
//
// Nested messages use a backpatch scheme: BeginNested() reserves one length byte,
// EndNested() writes the real length and, in the rare case the body outgrew 127 bytes,
// shifts the body right to make room for the longer varint.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/text_escape.h"

namespace gpuperf {

class ProtoWriter {
 public:
  // Where a nested message's body starts; returned by BeginNested.
  struct Nested {
    size_t length_at;
  };

  explicit ProtoWriter(std::string& out) : out_(out) {}

  void Varint(uint32_t field, uint64_t value) {
    // Tag and value in one append: exporters write hundreds of millions of these.
    char bytes[2 * kMaxVarintBytes];
    size_t n = EncodeVarint((field << 3) | kWireVarint, bytes);
    n += EncodeVarint(value, bytes + n);
    out_.append(bytes, n);
  }
  void Bool(uint32_t field, bool value) { Varint(field, value ? 1 : 0); }
  // int32/int64 fields: negative values take ten bytes, as the wire format demands.
  void Int(uint32_t field, int64_t value) { Varint(field, static_cast<uint64_t>(value)); }
  void Fixed64(uint32_t field, uint64_t value);
  void Double(uint32_t field, double value);
  void Bytes(uint32_t field, std::string_view bytes) {
    Tag(field, kWireLengthDelimited);
    AppendVarint(bytes.size());
    out_.append(bytes);
  }
  // A `string` field, which protobuf requires to be valid UTF-8: recorded names are made so
  // by the rule of base/text_escape.h.
  void String(uint32_t field, std::string_view text) {
    std::string storage;
    Bytes(field, EscapedView(text, TextForm::kUtf8, storage));
  }

  // A repeated varint field in packed form (one length-delimited run of varints, the
  // default for repeated scalars since proto3). Writes nothing for no values.
  void PackedVarints(uint32_t field, std::span<const uint64_t> values);

  Nested BeginNested(uint32_t field) {
    char bytes[kMaxVarintBytes + 1];
    size_t n = EncodeVarint((field << 3) | kWireLengthDelimited, bytes);
    bytes[n++] = 0;  // the length, patched by EndNested
    out_.append(bytes, n);
    return Nested{out_.size() - 1};
  }
  void EndNested(Nested nested);

  std::string& buffer() { return out_; }

  static size_t VarintSize(uint64_t value) {
    size_t size = 1;
    while (value >= 0x80) {
      value >>= 7;
      ++size;
    }
    return size;
  }

 private:
  static constexpr uint32_t kWireVarint = 0;
  static constexpr uint32_t kWireFixed64 = 1;
  static constexpr uint32_t kWireLengthDelimited = 2;

  static constexpr size_t kMaxVarintBytes = 10;

  // Writes `value` as a varint at `to`; returns its size. Filling a small array and
  // appending it once is several times faster than appending byte by byte.
  static size_t EncodeVarint(uint64_t value, char* to) {
    size_t n = 0;
    while (value >= 0x80) {
      to[n++] = static_cast<char>((value & 0x7f) | 0x80);
      value >>= 7;
    }
    to[n++] = static_cast<char>(value);
    return n;
  }
  void Tag(uint32_t field, uint32_t wire_type) { AppendVarint((field << 3) | wire_type); }
  void AppendVarint(uint64_t value) {
    if (value < 0x80) {
      out_.push_back(static_cast<char>(value));
      return;
    }
    char bytes[kMaxVarintBytes];
    out_.append(bytes, EncodeVarint(value, bytes));
  }

  std::string& out_;
};

}  // namespace gpuperf
