// Parquet's run-length / bit-packing hybrid (Encodings.md, "RLE = 3"): how data pages store
// dictionary indices and definition levels. Runs of 8 or more equal values become one
// run-length run; the rest is bit-packed in groups of 8, least significant bit first.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace gpuperf::parquet {

// Bits needed for values up to `max_value` (at least 1).
uint32_t BitWidth(uint64_t max_value);

// Appends the encoded `values` (each below 2^bit_width) to `out`, without a length prefix.
// AppendRleRun: `count` times `value`, one run.
void AppendRleRun(uint32_t value, size_t count, uint32_t bit_width, std::string& out);
void AppendRleHybrid(std::span<const uint32_t> values, uint32_t bit_width, std::string& out);

}  // namespace gpuperf::parquet
