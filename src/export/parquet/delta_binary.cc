#include "export/parquet/delta_binary.h"

#include <algorithm>
#include <cstring>

namespace gpuperf::parquet {
namespace {

constexpr uint32_t kMiniblockValues = kDeltaBlockValues / kDeltaMiniblocks;

void AppendUleb(uint64_t v, std::string& out) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

uint32_t WidthOf(uint64_t max_value) {
  uint32_t width = 0;
  while (width < 64 && (max_value >> width) != 0) ++width;
  return width;
}

// 32 values of `width` bits, least significant bit first, into width * 4 bytes.
void PackMiniblock(const uint64_t* values, uint32_t width, std::string& out) {
  if (width == 0) return;
  const size_t at = out.size();
  out.resize(at + width * kMiniblockValues / 8);
  auto* bytes = reinterpret_cast<unsigned char*>(out.data() + at);
  unsigned __int128 buffer = 0;
  uint32_t bits = 0;
  size_t byte = 0;
  for (uint32_t i = 0; i < kMiniblockValues; ++i) {
    buffer |= static_cast<unsigned __int128>(values[i]) << bits;
    bits += width;
    while (bits >= 64) {
      const uint64_t word = static_cast<uint64_t>(buffer);
      std::memcpy(bytes + byte, &word, 8);  // little-endian, as Parquet is
      byte += 8;
      buffer >>= 64;
      bits -= 64;
    }
  }
  while (bits > 0) {  // 32 values of any width end on a whole byte
    bytes[byte++] = static_cast<unsigned char>(buffer);
    buffer >>= 8;
    bits = bits > 8 ? bits - 8 : 0;
  }
}

}  // namespace

void AppendDeltaBinaryPacked(std::span<const int64_t> values, std::string& out) {
  AppendUleb(kDeltaBlockValues, out);
  AppendUleb(kDeltaMiniblocks, out);
  AppendUleb(values.size(), out);
  AppendUleb(values.empty() ? 0 : ZigZag(values[0]), out);
  uint64_t deltas[kDeltaBlockValues];
  for (size_t begin = 1; begin < values.size(); begin += kDeltaBlockValues) {
    const size_t count = std::min<size_t>(kDeltaBlockValues, values.size() - begin);
    // Differences wrap around as two's complement: the reader adds them back the same way.
    int64_t min_delta = INT64_MAX;
    for (size_t i = 0; i < count; ++i) {
      const auto d = static_cast<int64_t>(static_cast<uint64_t>(values[begin + i]) -
                                          static_cast<uint64_t>(values[begin + i - 1]));
      deltas[i] = static_cast<uint64_t>(d);
      min_delta = std::min(min_delta, d);
    }
    for (size_t i = 0; i < count; ++i) deltas[i] -= static_cast<uint64_t>(min_delta);
    std::fill(deltas + count, deltas + kDeltaBlockValues, 0);  // padding of the last miniblock
    AppendUleb(ZigZag(min_delta), out);
    const size_t used = (count + kMiniblockValues - 1) / kMiniblockValues;
    uint32_t widths[kDeltaMiniblocks] = {};
    for (size_t m = 0; m < used; ++m) {
      uint64_t most = 0;
      for (size_t i = 0; i < kMiniblockValues; ++i) most |= deltas[m * kMiniblockValues + i];
      widths[m] = WidthOf(most);
    }
    // Widths of miniblocks past the last value are written (as 0); their bodies are not.
    for (uint32_t w : widths) out.push_back(static_cast<char>(w));
    for (size_t m = 0; m < used; ++m) PackMiniblock(deltas + m * kMiniblockValues, widths[m], out);
  }
}

}  // namespace gpuperf::parquet
