// Text in a live page's fixed-size fields: cut to fit at a UTF-8 character boundary and
// always terminated; read back without trusting the terminator (a page is another
// process's memory).
#pragma once

#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>

namespace gpuperf::live {

template <size_t N>
void CopyText(char (&field)[N], std::string_view text) {
  size_t n = text.size() < N - 1 ? text.size() : N - 1;
  // Never end inside a multi-byte character: back off continuation bytes (10xxxxxx) and the
  // lead byte they follow.
  if (n < text.size()) {
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  }
  std::memcpy(field, text.data(), n);
  std::memset(field + n, 0, N - n);
}

template <size_t N>
std::string TextOf(const char (&field)[N]) {
  return std::string(field, strnlen(field, N));
}

}  // namespace gpuperf::live
