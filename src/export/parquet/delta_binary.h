// Parquet's DELTA_BINARY_PACKED encoding (Encodings.md, "Delta Encoding", = 5), of 64-bit
// integers: the differences between consecutive values, less the smallest difference of
// each block, bit-packed per miniblock at the width its largest needs. Timestamps, ids and
// durations that grow or stay near one another take a few bits each instead of eight bytes,
// so the compressor behind it has a few percent of the bytes to do.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace gpuperf::parquet {

// Blocks of 128 values in 4 miniblocks of 32, as the format's reference writers use.
inline constexpr uint32_t kDeltaBlockValues = 128;
inline constexpr uint32_t kDeltaMiniblocks = 4;

// Appends `values` encoded (header, then the blocks) to `out`.
void AppendDeltaBinaryPacked(std::span<const int64_t> values, std::string& out);

}  // namespace gpuperf::parquet
