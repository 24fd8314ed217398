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

// The varint at `pos`, which moves past it: what ByteCursor::Varint does, on a cursor in
// local variables (LocalCursor).
inline uint64_t NextLongVarint(const uint8_t*& pos, const uint8_t* end, bool& failed) {
  uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= end) {
      failed = true;
      return 0;
    }
    const uint8_t byte = *pos++;
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return value;
  }
  failed = true;  // more than 10 bytes: not a varint we wrote
  return 0;
}

inline uint64_t NextVarint(const uint8_t*& pos, const uint8_t* end, bool& failed) {
  // Most values of a chunk fit in one byte (deltas, small ids, flags).
  if (pos < end && *pos < 0x80) return *pos++;
  return NextLongVarint(pos, end, failed);
}

// Bounds-checked cursor over a decompressed payload. Reading past the end sets
// failed() and returns zeros, so decoders check once at the end, not per field.
class ByteCursor {
 public:
  ByteCursor(const uint8_t* data, size_t size) : pos_(data), end_(data + size) {}

  uint64_t Varint() { return NextVarint(pos_, end_, failed_); }

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
  const uint8_t* position() const { return pos_; }
  const uint8_t* end() const { return end_; }
  // Continues at `pos`, between position() and end().
  void MoveTo(const uint8_t* pos) { pos_ = pos; }

 private:
  friend class LocalCursor;
  const uint8_t* pos_;
  const uint8_t* end_;
  bool failed_ = false;
};

// A ByteCursor's position in local variables for the length of a loop, where the compiler
// can keep it in registers (a cursor reached through a reference is read from and written
// back to memory at every store a decoder makes); the cursor moves on when it goes.
class LocalCursor {
 public:
  explicit LocalCursor(ByteCursor& cursor)
      : cursor_(cursor), pos_(cursor.pos_), end_(cursor.end_), failed_(cursor.failed_) {}
  ~LocalCursor() {
    cursor_.pos_ = pos_;
    cursor_.failed_ = failed_;
  }
  LocalCursor(const LocalCursor&) = delete;
  LocalCursor& operator=(const LocalCursor&) = delete;

  uint64_t Varint() { return NextVarint(pos_, end_, failed_); }
  bool failed() const { return failed_; }

 private:
  ByteCursor& cursor_;
  const uint8_t* pos_;
  const uint8_t* const end_;
  bool failed_;
};

}  // namespace gpuperf::format
