// Options that take a number: CLI11 hands what was typed to the parsers of base/quantity.h
// (one grammar and one kind of message for every option, see there) and stores the result as
// a plain number in the unit the option's variable holds.
#pragma once

#include <CLI/CLI.hpp>

#include "base/quantity.h"

namespace gpuperf::cli {

// The variable gets the duration in whole `unit_ns` (kNsPerMs: milliseconds), rounded up.
CLI::Option* TakesDuration(CLI::Option* option, uint64_t unit_ns, const DurationSpec& spec);
// The variable gets the size in whole `unit_bytes` (1 << 20: MiB), rounded up.
CLI::Option* TakesSize(CLI::Option* option, uint64_t unit_bytes, const SizeSpec& spec);
CLI::Option* TakesCount(CLI::Option* option, const CountSpec& spec);
CLI::Option* TakesPercent(CLI::Option* option, const PercentSpec& spec);

// Process and thread ids, as traces and live pages hold them.
inline constexpr CountSpec kPidSpec{1, UINT32_MAX};
// --top: rows per table; 0, and any number past the largest table, mean all of them.
inline constexpr CountSpec kTopRowsSpec{0, UINT32_MAX, "", true};

}  // namespace gpuperf::cli
