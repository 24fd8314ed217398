// The on-disk layout of a trace file (documented for users in docs/trace-format.md).
//
//   file   := header chunk*
//   header := magic[8] version:u32le flags:u32le            (16 bytes)
//   chunk  := chunk_header payload[payload_size]
//   chunk_header (24 bytes, little endian):
//     magic:u32 type:u16 flags:u16 payload_size:u32 raw_size:u32 record_count:u32 crc:u32
//   crc = CRC-32C over the first 20 header bytes followed by the payload.
//
// The per-chunk magic lets the reader find the next chunk after a damaged header.
#pragma once

#include <cstdint>

#include "gpuperf/records.h"

namespace gpuperf::format {

inline constexpr char kFileMagic[8] = {'\x89', 'G', 'P', 'U', 'P', 'E', 'R', 'F'};
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint32_t kFileHeaderSize = 16;

inline constexpr uint32_t kChunkMagic = 0x4b484347;  // "GCHK" little endian
inline constexpr uint32_t kChunkHeaderSize = 24;
inline constexpr uint16_t kChunkFlagZstd = 1;
// A chunk is never larger than this, compressed or not: a bigger size is damage.
inline constexpr uint32_t kMaxChunkBytes = 256u << 20;

// Chunk types of variable-length records. Fixed-size record types use the numbers in
// GPUPERF_FIXED_RECORD_TYPES (records.h). Never renumber.
inline constexpr uint16_t kChunkStrings = 30;
inline constexpr uint16_t kChunkStacks = 31;
inline constexpr uint16_t kChunkSymbols = 32;
inline constexpr uint16_t kChunkPythonCodes = 33;  // PythonCodeRecord; older readers skip it
// PC sampling: PcSampleRecord, CubinRecord, SassLineRecord (format/gpu_profile_codec.h).
inline constexpr uint16_t kChunkGpuProfile = 35;

// The chunk type numbers of the fixed-size records (kKernelChunk, kStatChunk, ...): one
// definition for the writer, the reader and the appenders.
enum FixedChunkType : uint16_t {
#define GPUPERF_CHUNK_TYPE(Type, name, plural, number) k##Type##Chunk = number,
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_CHUNK_TYPE)
#undef GPUPERF_CHUNK_TYPE
};

}  // namespace gpuperf::format
