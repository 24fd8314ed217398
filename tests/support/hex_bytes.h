// Bytes as lower-case hex, for tests that compare encodings byte by byte.
#pragma once

#include <string>

namespace gpuperf::testing {

inline std::string HexBytes(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 0xf];
  }
  return out;
}

}  // namespace gpuperf::testing
