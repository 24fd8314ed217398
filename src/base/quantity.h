// The numbers people type: durations ("1.5ms", "2.5e-1 s"), sizes ("64 MiB"), whole numbers
// ("1e3", "100/s") and percentages ("0.5%"). Every option of the CLI and every GPUPERF_*
// variable the injection library reads (it compiles this file in) goes through these, so all
// of them accept the same forms:
//
//   digits [. digits] [e [+|-] digits] [spaces] [unit]
//
// and refuse the same way: a sign, nan, inf, hex, an unknown unit or anything after the unit
// is "not a duration" (or size, ...) with examples of what is; a value outside the option's
// range, however large, is "out of range" with the range. Nothing is clamped, no conversion
// overflows, and no locale changes what a decimal point is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpuperf/status.h"

namespace gpuperf {

// Splits "<number>[spaces]<unit>" ("1.5ms" -> 1.5, "ms"; "2e3 KiB" -> 2000, "KiB"): false
// when `text` does not start with a number of the grammar above. A number too large for a
// double reads as infinity, one too small as 0; every caller's range check refuses the first.
bool SplitNumber(std::string_view text, double* number, std::string_view* unit);

inline constexpr uint64_t kNsPerUs = 1'000;
inline constexpr uint64_t kNsPerMs = 1'000'000;
inline constexpr uint64_t kNsPerSecond = 1'000'000'000;
inline constexpr uint64_t kNsPerMinute = 60 * kNsPerSecond;
inline constexpr uint64_t kNsPerHour = 3600 * kNsPerSecond;
// The longest duration any option takes: twice this still fits a 64-bit nanosecond clock
// beside the time since boot (a capture range is start + delay + duration).
inline constexpr uint64_t kMaxDurationNs = 1'000'000 * kNsPerHour;

// How one option reads a duration. Units: ns, us (µs), ms, s, m (min), h.
struct DurationSpec {
  uint64_t bare_ns = 0;  // what a number without unit counts (kNsPerSecond: seconds); 0: it
                         // needs a unit (0 alone is still 0)
  uint64_t min_ns = 0;
  uint64_t max_ns = kMaxDurationNs;
};

// How one option reads a size. Units: B, KB, MB, GB, TB (decimal), KiB, MiB, GiB, TiB.
struct SizeSpec {
  uint64_t bare_bytes = 1;  // what a number without unit counts (1024: KiB)
  uint64_t min_bytes = 0;
  uint64_t max_bytes = uint64_t{1} << 50;
};

// How one option reads a whole number: "20", "1e3", "2.0"; not "2.5".
struct CountSpec {
  constexpr CountSpec(uint64_t min, uint64_t max, std::string_view unit = {},
                      bool more_is_all = false)
      : min(min), max(max), unit(unit), more_is_all(more_is_all) {}

  uint64_t min;
  uint64_t max;
  std::string_view unit;  // a unit that may follow the number ("/s"); empty: none
  // Past `max` means "every one" and reads as 0 (--top: rows per table, 0: all).
  bool more_is_all;
};

struct PercentSpec {  // "0.5" or "0.5%"
  double min = 0;
  double max = 100;
};

// Each returns the value in the spec's base unit (ns, bytes, ...), or an error whose message
// starts with `name` ("--delay: ", "GPUPERF_DELAY_MS: "; none when empty, for CLI11, which
// prefixes its own) and says what is accepted:
//   --delay: "nan" is not a duration; use e.g. 2.5, 500ms, 1.5s, 2m
//   --stack-depth: "300" is out of range; use 1 to 256
Result<uint64_t> ParseDurationNs(std::string_view name, std::string_view text,
                                 const DurationSpec& spec);
Result<uint64_t> ParseBytes(std::string_view name, std::string_view text, const SizeSpec& spec);
Result<uint64_t> ParseCount(std::string_view name, std::string_view text, const CountSpec& spec);
Result<double> ParsePercent(std::string_view name, std::string_view text, const PercentSpec& spec);

// A duration or size in the unit an option stores it in, rounded up so that no positive value
// becomes 0 ("--delay 0.4ms" waits 1 ms).
uint64_t CeilDiv(uint64_t value, uint64_t unit);

// Bounds as messages show them: the largest unit that divides them ("100ms", "24h", "64KiB").
std::string DurationText(uint64_t ns);
std::string SizeText(uint64_t bytes);

}  // namespace gpuperf
