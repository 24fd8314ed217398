// CRC-32C (Castagnoli), the checksum of every trace chunk.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuperf {

// Continues a running CRC: pass 0 to start.
uint32_t Crc32c(uint32_t crc, const void* data, size_t size);

// The same from tables, for processors without a CRC-32C instruction (Crc32c picks).
uint32_t Crc32cPortable(uint32_t crc, const void* data, size_t size);

}  // namespace gpuperf
