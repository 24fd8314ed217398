// A trace chunk built by hand, byte by byte: for tests that put into a file what no writer
// writes (a chunk type from the future, a payload of their own making).
#pragma once

#include <cstdint>
#include <string>

namespace gpuperf::testing {

// A well-formed uncompressed chunk of `type` holding `payload` and saying it has `count`
// records, with its checksum.
std::string RawChunk(uint16_t type, const std::string& payload, uint32_t count);

}  // namespace gpuperf::testing
