// Chunk type 35 (kChunkGpuProfile): the variable-length records of PC sampling. The payload
// starts with a varint naming which kind of record the chunk holds (GpuProfileKind), then
// the records, each field a varint (strings as file-local ids, remapped on reading).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/record_codec.h"
#include "gpuperf/records.h"

namespace gpuperf::format {

// Never renumber: stored in files. A reader skips a chunk of a kind it does not know.
enum class GpuProfileKind : uint8_t { kPcSamples = 1, kCubins = 2, kSassLines = 3 };

void EncodePcSamples(std::span<const PcSampleRecord> samples, std::string& out);
void EncodeCubins(std::span<const CubinRecord> cubins, std::string& out);
void EncodeSassLines(std::span<const SassLineRecord> lines, std::string& out);

// What one chunk held; only the vector of its kind is filled.
struct GpuProfileChunk {
  GpuProfileKind kind = GpuProfileKind::kPcSamples;
  std::vector<PcSampleRecord> pc_samples;
  std::vector<CubinRecord> cubins;
  std::vector<SassLineRecord> sass_lines;
};

enum class GpuProfileDecode { kOk, kMalformed, kUnknownKind };

GpuProfileDecode DecodeGpuProfile(ByteCursor& in, uint32_t count, IdMaps& ids,
                                  GpuProfileChunk& out);

}  // namespace gpuperf::format
