#include "cpython/python_objects.h"

#include <cstring>

namespace gpuperf::inject {
namespace {

bool IsObjectOfType(const PyRuntimeView& rt, uint64_t object, uint64_t type) {
  return object != 0 && (object & 7) == 0 && PyLoad<uint64_t>(object, rt.layout.ob_type) == type;
}

// Appends one code point as UTF-8 if it fits; false when it does not.
bool AppendUtf8(uint32_t c, char* out, int capacity, int* used) {
  if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) c = 0xFFFD;
  char buffer[4];
  int n;
  if (c < 0x80) {
    buffer[0] = char(c);
    n = 1;
  } else if (c < 0x800) {
    buffer[0] = char(0xC0 | (c >> 6));
    buffer[1] = char(0x80 | (c & 0x3F));
    n = 2;
  } else if (c < 0x10000) {
    buffer[0] = char(0xE0 | (c >> 12));
    buffer[1] = char(0x80 | ((c >> 6) & 0x3F));
    buffer[2] = char(0x80 | (c & 0x3F));
    n = 3;
  } else {
    buffer[0] = char(0xF0 | (c >> 18));
    buffer[1] = char(0x80 | ((c >> 12) & 0x3F));
    buffer[2] = char(0x80 | ((c >> 6) & 0x3F));
    buffer[3] = char(0x80 | (c & 0x3F));
    n = 4;
  }
  if (*used + n > capacity) return false;
  std::memcpy(out + *used, buffer, n);
  *used += n;
  return true;
}

}  // namespace

int CopyPyString(const PyRuntimeView& rt, uint64_t object, char* out, int capacity) {
  const PyLayout& l = rt.layout;
  if (!IsObjectOfType(rt, object, rt.unicode_type)) return -1;
  uint64_t length = PyLoad<uint64_t>(object, l.unicode_length);
  uint32_t state = PyLoad<uint32_t>(object, l.unicode_state);
  uint32_t kind = (state >> 2) & 7;
  bool compact = (state >> 5) & 1;
  bool ascii = (state >> 6) & 1;
  if (!compact || length > kMaxSanePyStringLength) return -1;
  if (ascii) {
    if (kind != 1) return -1;
    int n = length < uint64_t(capacity) ? int(length) : capacity;
    std::memcpy(out, reinterpret_cast<const void*>(object + l.unicode_ascii_data), n);
    return n;
  }
  if (kind != 1 && kind != 2 && kind != 4) return -1;
  uint64_t data = object + l.unicode_compact_data;
  int used = 0;
  for (uint64_t i = 0; i < length; ++i) {
    uint32_t c = kind == 1   ? PyLoad<uint8_t>(data, int32_t(i))
                 : kind == 2 ? PyLoad<uint16_t>(data, int32_t(2 * i))
                             : PyLoad<uint32_t>(data, int32_t(4 * i));
    if (!AppendUtf8(c, out, capacity, &used)) break;
  }
  return used;
}

bool PyBytesContents(const PyRuntimeView& rt, uint64_t object, const uint8_t** data,
                     uint64_t* size) {
  if (!IsObjectOfType(rt, object, rt.bytes_type)) return false;
  int64_t length = PyLoad<int64_t>(object, rt.layout.var_size);
  if (length < 0 || uint64_t(length) > kMaxSanePyBytesLength) return false;
  *data = reinterpret_cast<const uint8_t*>(object + rt.layout.bytes_data);
  *size = uint64_t(length);
  return true;
}

}  // namespace gpuperf::inject
