// One chunk of a trace file's bytes, as every walk over them sees it (the reader, and the
// look at a file's first process record before a directory is read).
#pragma once

#include <zstd.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "base/crc32c.h"
#include "format/file_format.h"

namespace gpuperf::format {

struct ChunkView {
  uint16_t type = 0;
  uint16_t flags = 0;
  uint32_t raw_size = 0;
  uint32_t record_count = 0;
  std::span<const uint8_t> whole;    // header and payload
  std::span<const uint8_t> payload;  // as stored (compressed when flags say so)
};

enum class ChunkAt {
  kWhole,      // `chunk` is filled in
  kTorn,       // the bytes end inside this chunk
  kBadHeader,  // no chunk header here (damage): look for the next magic
};

inline uint32_t ChunkU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline ChunkAt ChunkAtOffset(std::span<const uint8_t> bytes, size_t pos, ChunkView& chunk) {
  const size_t left = bytes.size() - pos;
  if (left < kChunkHeaderSize) return ChunkAt::kTorn;
  const uint8_t* header = bytes.data() + pos;
  const uint32_t payload_size = ChunkU32(header + 8);
  chunk.raw_size = ChunkU32(header + 12);
  if (ChunkU32(header) != kChunkMagic || payload_size > kMaxChunkBytes ||
      chunk.raw_size > kMaxChunkBytes) {
    return ChunkAt::kBadHeader;
  }
  if (left - kChunkHeaderSize < payload_size) return ChunkAt::kTorn;
  uint16_t type, flags;
  std::memcpy(&type, header + 4, 2);
  std::memcpy(&flags, header + 6, 2);
  chunk.type = type;
  chunk.flags = flags;
  chunk.record_count = ChunkU32(header + 16);
  chunk.whole = bytes.subspan(pos, kChunkHeaderSize + payload_size);
  chunk.payload = chunk.whole.subspan(kChunkHeaderSize);
  return ChunkAt::kWhole;
}

// After a damaged chunk header at `pos`, where the next chunk magic is (the end of `bytes`
// when there is none).
inline size_t NextChunkMagic(std::span<const uint8_t> bytes, size_t pos) {
  for (size_t p = pos + 1; p + 4 <= bytes.size(); ++p) {
    if (ChunkU32(bytes.data() + p) == kChunkMagic) return p;
  }
  return bytes.size();
}

// Walks the chunks of a file's bytes (after its header) as the reader does: visit(at, pos,
// chunk) for each whole chunk (kWhole), each damaged header (kBadHeader; the walk goes on at
// the next chunk magic) and a torn end (kTorn, the last call). Returns where the last whole
// chunk ends, or the torn one starts.
template <class Visit>
size_t WalkChunks(std::span<const uint8_t> bytes, Visit visit) {
  size_t pos = kFileHeaderSize;
  while (pos < bytes.size()) {
    ChunkView chunk;
    const ChunkAt at = ChunkAtOffset(bytes, pos, chunk);
    visit(at, pos, chunk);
    if (at == ChunkAt::kTorn) break;
    pos = at == ChunkAt::kBadHeader ? NextChunkMagic(bytes, pos) : pos + chunk.whole.size();
  }
  return pos;
}

inline bool ChunkChecksumOk(const ChunkView& chunk) {
  uint32_t crc = Crc32c(0, chunk.whole.data(), 20);
  crc = Crc32c(crc, chunk.payload.data(), chunk.payload.size());
  return crc == ChunkU32(chunk.whole.data() + 20);
}

// The chunk's raw records: the payload itself, or decompressed into `buffer` (with
// `context` when given: one kept from chunk to chunk spares zstd setting up its tables and
// buffers for every chunk). Empty with false when it does not decompress to its stated size.
inline bool ChunkRawBytes(const ChunkView& chunk, std::vector<uint8_t>& buffer,
                          std::span<const uint8_t>& raw, ZSTD_DCtx* context = nullptr) {
  if (!(chunk.flags & kChunkFlagZstd)) {
    raw = chunk.payload;
    return true;
  }
  buffer.resize(chunk.raw_size);
  const size_t n = context != nullptr
                       ? ZSTD_decompressDCtx(context, buffer.data(), buffer.size(),
                                             chunk.payload.data(), chunk.payload.size())
                       : ZSTD_decompress(buffer.data(), buffer.size(), chunk.payload.data(),
                                         chunk.payload.size());
  if (ZSTD_isError(n) || n != chunk.raw_size) return false;
  raw = std::span<const uint8_t>(buffer.data(), buffer.size());
  return true;
}

}  // namespace gpuperf::format
