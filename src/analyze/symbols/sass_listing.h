// nvdisasm's listing of a cubin, read back: each function's instructions by offset. Used at
// record time, where nvdisasm is found (CUDA toolkit), so that `gpuperf source --sass` shows
// SASS text wherever the trace is read.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace gpuperf {

// function (mangled) -> offset -> instruction ("FFMA R4, R2, R3, R4", predicate included).
using SassListing = std::map<std::string, std::map<uint64_t, std::string>>;

SassListing ParseSassListing(std::string_view text);

}  // namespace gpuperf
