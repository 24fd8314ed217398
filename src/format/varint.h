// LEB128 varints and zigzag, the integer encoding of every chunk payload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpuperf::format {

inline void PutVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

inline uint64_t ZigZag(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}
inline int64_t UnZigZag(uint64_t value) {
  return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
}

// Bounds-checked cursor over a decompressed payload. Reading past the end sets
// failed() and returns zeros, so decoders check once at the end, not per field.
class ByteCursor {
 public:
  ByteCursor(const uint8_t* data, size_t size) : pos_(data), end_(data + size) {}

  uint64_t Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= end_) {
        failed_ = true;
        return 0;
      }
      uint8_t byte = *pos_++;
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return value;
    }
    failed_ = true;  // more than 10 bytes: not a varint we wrote
    return 0;
  }

  // Returns a pointer to `size` bytes, or nullptr (and failed()) if there are fewer.
  const uint8_t* Bytes(size_t size) {
    if (static_cast<size_t>(end_ - pos_) < size) {
      failed_ = true;
      pos_ = end_;
      return nullptr;
    }
    const uint8_t* start = pos_;
    pos_ += size;
    return start;
  }

  size_t remaining() const { return static_cast<size_t>(end_ - pos_); }
  bool failed() const { return failed_; }
  void Fail() { failed_ = true; }

 private:
  const uint8_t* pos_;
  const uint8_t* end_;
  bool failed_ = false;
};

}  // namespace gpuperf::format
