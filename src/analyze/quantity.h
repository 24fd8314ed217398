// Parsing of the quantities people type on the command line: durations ("1.5ms",
// "200us", "2s") and byte counts ("64MiB", "1.5GB").
#pragma once

#include <cstdint>
#include <string_view>

#include "gpuperf/status.h"

namespace gpuperf {

// "<number><unit>" with unit ns, us (or µs), ms, s, min; "0" alone is accepted.
Result<uint64_t> ParseDurationNs(std::string_view text);

// "<number>[unit]" with unit B, KB, MB, GB (decimal) or KiB, MiB, GiB (binary).
Result<uint64_t> ParseBytes(std::string_view text);

// Splits "<number><suffix>" (e.g. "1.5ms" -> 1.5, "ms"); false if there is no number.
bool SplitNumber(std::string_view text, double* number, std::string_view* suffix);

}  // namespace gpuperf
