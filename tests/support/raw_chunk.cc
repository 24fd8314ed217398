#include "support/raw_chunk.h"

#include <cstring>

#include "base/crc32c.h"
#include "format/file_format.h"

namespace gpuperf::testing {

std::string RawChunk(uint16_t type, const std::string& payload, uint32_t count) {
  std::string chunk(format::kChunkHeaderSize, '\0');
  const uint32_t magic = format::kChunkMagic, size = static_cast<uint32_t>(payload.size());
  const uint16_t flags = 0;
  std::memcpy(chunk.data(), &magic, 4);
  std::memcpy(chunk.data() + 4, &type, 2);
  std::memcpy(chunk.data() + 6, &flags, 2);
  std::memcpy(chunk.data() + 8, &size, 4);
  std::memcpy(chunk.data() + 12, &size, 4);
  std::memcpy(chunk.data() + 16, &count, 4);
  chunk += payload;
  uint32_t crc = Crc32c(0, chunk.data(), 20);
  crc = Crc32c(crc, chunk.data() + format::kChunkHeaderSize, payload.size());
  std::memcpy(chunk.data() + 20, &crc, 4);
  return chunk;
}

}  // namespace gpuperf::testing
