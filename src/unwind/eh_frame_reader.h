// Bounded reading of `.eh_frame` bytes: fixed-size values, LEB128, DW_EH_PE_* encoded
// pointers, and the head of each CIE or FDE. Every read checks the range it was given and
// fails (sticky) instead of reading past it. Internal to the .eh_frame compiler
// (eh_frame_parser.h, cfa_program.h). x86-64 only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "unwind/eh_frame_parser.h"

namespace gpuperf::cfi {

// DWARF registers on x86-64 (System V psABI, figure 3.36).
constexpr uint64_t kDwarfRbp = 6;
constexpr uint64_t kDwarfRsp = 7;
constexpr uint64_t kDwarfReturnAddress = 16;

// DW_EH_PE_* pointer encodings: the low nibble is the format, the next three bits the base.
constexpr uint8_t kPeOmit = 0xff;
constexpr uint8_t kPeIndirect = 0x80;
constexpr uint8_t kPeApplicationMask = 0x70;
constexpr uint8_t kPePcrel = 0x10;
constexpr uint8_t kPeDatarel = 0x30;
constexpr uint8_t kPeAligned = 0x50;
constexpr uint8_t kPeDatarelSdata4 = 0x3b;  // the .eh_frame_hdr table as GNU ld writes it

// Bounded little-endian reads over [pos, end) of an EhFrameBytes; a failed read sets a
// sticky error and returns false.
class ByteReader {
 public:
  ByteReader(const EhFrameBytes& bytes, size_t pos, size_t end)
      : bytes_(bytes), pos_(pos), end_(end < bytes.size ? end : bytes.size) {
    if (pos_ > end_) ok_ = false;
  }

  bool ok() const { return ok_; }
  size_t pos() const { return pos_; }
  size_t end() const { return end_; }
  bool AtEnd() const { return pos_ >= end_; }
  uint64_t address() const { return bytes_.address + pos_; }

  bool Bytes(void* out, size_t n) {
    if (!ok_ || end_ - pos_ < n) return Fail();
    std::memcpy(out, bytes_.data + pos_, n);
    pos_ += n;
    return true;
  }
  template <class T>
  bool Fixed(T* out) {
    return Bytes(out, sizeof(T));
  }
  bool Skip(uint64_t n) {
    if (!ok_ || end_ - pos_ < n) return Fail();
    pos_ += static_cast<size_t>(n);
    return true;
  }
  bool Uleb(uint64_t* out) { return Leb128(false, out); }
  bool Sleb(int64_t* out) {
    uint64_t value = 0;
    if (!Leb128(true, &value)) return false;
    *out = static_cast<int64_t>(value);
    return true;
  }

  // A value in the format of `encoding`'s low nibble, sign-extended where signed.
  bool Raw(uint8_t encoding, uint64_t* out) {
    switch (encoding & 0x0f) {
      case 0x00:  // absptr
      case 0x04:  // udata8
      case 0x0c:  // sdata8
        return Fixed(out);
      case 0x01:
        return Uleb(out);
      case 0x09:
        return Widened<int64_t>(out, &ByteReader::Sleb);
      case 0x02:
        return Widened<uint16_t>(out);
      case 0x03:
        return Widened<uint32_t>(out);
      case 0x0a:
        return Widened<int16_t>(out);
      case 0x0b:
        return Widened<int32_t>(out);
      default:
        return Fail();
    }
  }

  // An encoded pointer. `data_base` is the base of datarel values (0: none allowed). The
  // indirect bit is not followed: callers that need a code address reject it.
  bool Pointer(uint8_t encoding, uint64_t data_base, uint64_t* out) {
    if (encoding == kPeOmit) return Fail();
    const uint8_t application = encoding & kPeApplicationMask;
    if (application == kPeAligned) {
      const uint64_t misalign = address() & 7;
      if (misalign != 0 && !Skip(8 - misalign)) return false;
    }
    const uint64_t field_address = address();
    uint64_t value = 0;
    if (!Raw(encoding, &value)) return false;
    switch (application) {
      case 0x00:
      case kPeAligned:
        break;
      case kPePcrel:
        value += field_address;
        break;
      case kPeDatarel:
        if (data_base == 0) return Fail();
        value += data_base;
        break;
      default:  // textrel, funcrel: never used on x86-64 Linux
        return Fail();
    }
    *out = value;
    return true;
  }

  bool SkipPointer(uint8_t encoding) {
    if (encoding == kPeOmit) return true;
    if ((encoding & kPeApplicationMask) == kPeAligned) {
      const uint64_t misalign = address() & 7;
      if (misalign != 0 && !Skip(8 - misalign)) return false;
    }
    uint64_t ignored = 0;
    return Raw(encoding, &ignored);
  }

  // Reads a T (with `read`, or as fixed bytes) and widens it to 64 bits, sign-extending
  // signed types.
  template <class T>
  bool Widened(uint64_t* out, bool (ByteReader::*read)(T*) = &ByteReader::Fixed<T>) {
    T value = 0;
    if (!(this->*read)(&value)) return false;
    *out = static_cast<uint64_t>(
        static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(value));
    return true;
  }

  // LEB128: 7 bits a byte, low first; bits past 64 are dropped.
  bool Leb128(bool is_signed, uint64_t* out) {
    uint64_t value = 0;
    unsigned shift = 0;
    uint8_t byte = 0;
    do {
      if (!Fixed(&byte)) return false;
      if (shift < 64) value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    if (is_signed && shift < 64 && (byte & 0x40)) value |= ~uint64_t{0} << shift;
    *out = value;
    return true;
  }

 private:
  bool Fail() {
    ok_ = false;
    return false;
  }

  const EhFrameBytes& bytes_;
  size_t pos_;
  size_t end_;
  bool ok_ = true;
};

// The head of a CIE or FDE: its length (32-bit, or 64-bit after 0xffffffff) and its id
// (0 for a CIE; for an FDE the distance back to its CIE), as wide as the length.
struct EntryHeader {
  size_t id_position = 0;  // where the id field starts
  size_t body = 0;         // where the fields after the id start
  size_t end = 0;          // one past the entry
  uint64_t id = 0;
};

// False for a zero length (the section's terminator), a length past the bytes, or an id
// that does not fit.
inline bool ReadEntryHeader(const EhFrameBytes& bytes, uint64_t offset, EntryHeader* header) {
  if (offset >= bytes.size) return false;
  ByteReader in(bytes, static_cast<size_t>(offset), bytes.size);
  uint32_t short_length = 0;
  uint64_t length = 0;
  if (!in.Fixed(&short_length)) return false;
  const bool is_64 = short_length == 0xffffffffu;
  if (!is_64) {
    length = short_length;
  } else if (!in.Fixed(&length)) {
    return false;
  }
  if (length == 0 || length > in.end() - in.pos()) return false;
  header->id_position = in.pos();
  header->end = in.pos() + static_cast<size_t>(length);
  ByteReader id_field(bytes, in.pos(), header->end);
  uint32_t id32 = 0;
  if (is_64 ? !id_field.Fixed(&header->id) : !id_field.Fixed(&id32)) return false;
  if (!is_64) header->id = id32;
  header->body = id_field.pos();
  return true;
}

}  // namespace gpuperf::cfi
