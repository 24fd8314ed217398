// A minimal protobuf wire-format encoder: varints, fixed64, length-delimited fields and
// nested messages, appended to a byte buffer. Written for exporters that stream millions
// of small messages (Perfetto packets, pprof samples) without a protobuf library.
//
// Nested messages use a backpatch scheme: BeginNested() reserves one length byte,
// EndNested() writes the real length and, in the rare case the body outgrew 127 bytes,
// shifts the body right to make room for the longer varint.
//
// The buffer is a std::string (ProtoWriter) or a ByteBuffer (FastProtoWriter): each field
// is encoded in place, straight into room the buffer hands out, and a ByteBuffer hands
// it out without filling it first, which makes the hot path a few stores per field.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/text_escape.h"

namespace gpuperf {

// The encoder's field writers are a handful of stores each; calls would cost more than
// the work. Inlined, a constant field number also folds into a constant tag.
#define GPUPERF_PROTO_INLINE [[gnu::always_inline]] inline

// A growable byte array that, unlike std::string, gives room to write into without
// zero-filling it first.
class ByteBuffer {
 public:
  // `n` more bytes at the end, to be written by the caller.
  GPUPERF_PROTO_INLINE char* Grow(size_t n) {
    if (capacity_ - size_ < n) Reallocate(size_ + n);
    char* at = data_.get() + size_;
    size_ += n;
    return at;
  }
  // Drops the bytes past `size`.
  void Truncate(size_t size) { size_ = size; }
  void reserve(size_t capacity) {
    if (capacity > capacity_) Reallocate(capacity);
  }
  void clear() { size_ = 0; }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  std::string_view view() const { return {data_.get(), size_}; }

 private:
  void Reallocate(size_t at_least) {
    size_t capacity = capacity_ ? capacity_ : 4096;
    while (capacity < at_least) capacity *= 2;
    std::unique_ptr<char[]> data(new char[capacity]);
    if (size_) std::memcpy(data.get(), data_.get(), size_);
    data_ = std::move(data);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

namespace proto_internal {
GPUPERF_PROTO_INLINE char* Grow(std::string& out, size_t n) {
  const size_t at = out.size();
  out.resize(at + n);
  return out.data() + at;
}
GPUPERF_PROTO_INLINE void Truncate(std::string& out, size_t size) {
  out.resize(size);
}
GPUPERF_PROTO_INLINE char* Grow(ByteBuffer& out, size_t n) {
  return out.Grow(n);
}
GPUPERF_PROTO_INLINE void Truncate(ByteBuffer& out, size_t size) {
  out.Truncate(size);
}
}  // namespace proto_internal

template <class Buffer>
class BasicProtoWriter {
 public:
  // Where a nested message's body starts; returned by BeginNested.
  struct Nested {
    size_t length_at;
  };

  explicit BasicProtoWriter(Buffer& out) : out_(out) {}

  GPUPERF_PROTO_INLINE void Varint(uint32_t field, uint64_t value) {
    char* at = proto_internal::Grow(out_, 2 * kMaxVarintBytes);
    at = EncodeVarint((field << 3) | kWireVarint, at);
    Commit(EncodeVarint(value, at));
  }
  GPUPERF_PROTO_INLINE void Bool(uint32_t field, bool value) { Varint(field, value ? 1 : 0); }
  // int32/int64 fields: negative values take ten bytes, as the wire format demands.
  GPUPERF_PROTO_INLINE void Int(uint32_t field, int64_t value) {
    Varint(field, static_cast<uint64_t>(value));
  }
  GPUPERF_PROTO_INLINE void Fixed64(uint32_t field, uint64_t value) {
    char* at = proto_internal::Grow(out_, kMaxVarintBytes + 8);
    at = EncodeVarint((field << 3) | kWireFixed64, at);
    for (int i = 0; i < 8; ++i) *at++ = static_cast<char>((value >> (8 * i)) & 0xff);
    Commit(at);
  }
  GPUPERF_PROTO_INLINE void Double(uint32_t field, double value) {
    uint64_t bits;
    static_assert(sizeof(bits) == sizeof(value));
    std::memcpy(&bits, &value, sizeof(bits));
    Fixed64(field, bits);
  }
  GPUPERF_PROTO_INLINE void Bytes(uint32_t field, std::string_view bytes) {
    char* at = proto_internal::Grow(out_, 2 * kMaxVarintBytes + bytes.size());
    at = EncodeVarint((field << 3) | kWireLengthDelimited, at);
    at = EncodeVarint(bytes.size(), at);
    if (!bytes.empty()) std::memcpy(at, bytes.data(), bytes.size());
    Commit(at + bytes.size());
  }
  // A `string` field, which protobuf requires to be valid UTF-8: recorded names are made so
  // by the rule of base/text_escape.h.
  void String(uint32_t field, std::string_view text) {
    std::string storage;
    Bytes(field, EscapedView(text, TextForm::kUtf8, storage));
  }

  // A repeated varint field in packed form (one length-delimited run of varints, the
  // default for repeated scalars since proto3). Writes nothing for no values.
  void PackedVarints(uint32_t field, std::span<const uint64_t> values) {
    if (values.empty()) return;
    size_t length = 0;
    for (uint64_t value : values) length += VarintSize(value);
    char* at = proto_internal::Grow(out_, 2 * kMaxVarintBytes + length);
    at = EncodeVarint((field << 3) | kWireLengthDelimited, at);
    at = EncodeVarint(length, at);
    for (uint64_t value : values) at = EncodeVarint(value, at);
    Commit(at);
  }

  GPUPERF_PROTO_INLINE Nested BeginNested(uint32_t field) {
    char* at = proto_internal::Grow(out_, kMaxVarintBytes + 1);
    at = EncodeVarint((field << 3) | kWireLengthDelimited, at);
    *at++ = 0;  // the length, patched by EndNested
    Commit(at);
    return Nested{out_.size() - 1};
  }
  GPUPERF_PROTO_INLINE void EndNested(Nested nested) {
    const size_t length = out_.size() - (nested.length_at + 1);
    if (length >= 0x80) return EndLongNested(nested, length);
    out_.data()[nested.length_at] = static_cast<char>(length);  // the reserved byte holds it
  }

  Buffer& buffer() { return out_; }

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

  // Writes `value` as a varint at `to`; returns the end of what it wrote.
  GPUPERF_PROTO_INLINE static char* EncodeVarint(uint64_t value, char* to) {
    while (value >= 0x80) {
      *to++ = static_cast<char>((value & 0x7f) | 0x80);
      value >>= 7;
    }
    *to++ = static_cast<char>(value);
    return to;
  }
  // A body of 128 bytes or more: shifts it right to make room for the longer length.
  void EndLongNested(Nested nested, size_t length) {
    const size_t extra = VarintSize(length) - 1;
    proto_internal::Grow(out_, extra);
    char* body = out_.data() + nested.length_at + 1;
    std::memmove(body + extra, body, length);
    EncodeVarint(length, out_.data() + nested.length_at);
  }
  // Ends the field at `end`, giving back the room it did not use.
  GPUPERF_PROTO_INLINE void Commit(char* end) { proto_internal::Truncate(out_, end - out_.data()); }

  Buffer& out_;
};

using ProtoWriter = BasicProtoWriter<std::string>;
using FastProtoWriter = BasicProtoWriter<ByteBuffer>;

#undef GPUPERF_PROTO_INLINE

}  // namespace gpuperf
