#include "export/parquet/rle_hybrid.h"

#include <algorithm>

namespace gpuperf::parquet {
namespace {

constexpr size_t kMinRun = 8;  // shorter runs cost less bit-packed

void AppendVarint(uint64_t v, std::string& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

size_t RunLength(std::span<const uint32_t> values, size_t at) {
  size_t end = at;
  while (end < values.size() && values[end] == values[at]) ++end;
  return end - at;
}

// Values [begin, begin + 8 * groups), zeros past the end of `values`.
void AppendPacked(std::span<const uint32_t> values, size_t begin, size_t groups, uint32_t bit_width,
                  std::string& out) {
  AppendVarint((uint64_t{groups} << 1) | 1, out);
  uint64_t buffer = 0;
  uint32_t bits = 0;
  for (size_t i = begin; i < begin + 8 * groups; ++i) {
    const uint64_t value = i < values.size() ? values[i] : 0;
    buffer |= value << bits;
    bits += bit_width;
    while (bits >= 8) {
      out.push_back(static_cast<char>(buffer & 0xFF));
      buffer >>= 8;
      bits -= 8;
    }
  }
  // 8 values of any width fill whole bytes: nothing is left over.
}

}  // namespace

void AppendRleRun(uint32_t value, size_t count, uint32_t bit_width, std::string& out) {
  AppendVarint(uint64_t{count} << 1, out);
  for (uint32_t byte = 0; byte < (bit_width + 7) / 8; ++byte) {
    out.push_back(static_cast<char>((value >> (8 * byte)) & 0xFF));
  }
}

uint32_t BitWidth(uint64_t max_value) {
  uint32_t width = 1;
  while (width < 64 && (max_value >> width) != 0) ++width;
  return width;
}

void AppendRleHybrid(std::span<const uint32_t> values, uint32_t bit_width, std::string& out) {
  size_t i = 0;
  while (i < values.size()) {
    const size_t run = RunLength(values, i);
    if (run >= kMinRun) {
      AppendRleRun(values[i], run, bit_width, out);
      i += run;
      continue;
    }
    // Groups of 8 until a long run begins at a group's start, or the values end.
    const size_t begin = i;
    size_t groups = 0;
    while (i < values.size()) {
      if (groups > 0 && RunLength(values, i) >= kMinRun) break;
      i += 8;
      ++groups;
    }
    AppendPacked(values, begin, groups, bit_width, out);
    i = std::min(i, values.size());
  }
}

}  // namespace gpuperf::parquet
