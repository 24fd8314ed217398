#include "base/quantity.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <span>
#include <system_error>

namespace gpuperf {
namespace {

struct Unit {
  std::string_view name;
  uint64_t scale;
};

// Largest first: DurationText and SizeText pick the first that divides a bound.
constexpr Unit kDurationUnits[] = {
    {"h", kNsPerHour}, {"m", kNsPerMinute}, {"min", kNsPerMinute}, {"s", kNsPerSecond},
    {"ms", kNsPerMs},  {"us", kNsPerUs},    {"µs", kNsPerUs},      {"ns", 1}};
constexpr Unit kSizeUnits[] = {{"TiB", uint64_t{1} << 40},
                               {"GiB", uint64_t{1} << 30},
                               {"MiB", uint64_t{1} << 20},
                               {"KiB", uint64_t{1} << 10},
                               {"TB", 1'000'000'000'000},
                               {"GB", 1'000'000'000},
                               {"MB", 1'000'000},
                               {"KB", 1'000},
                               {"B", 1}};

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}

size_t SkipDigits(std::string_view text, size_t at) {
  while (at < text.size() && IsDigit(text[at])) ++at;
  return at;
}

std::string Quoted(std::string_view text) {
  return "\"" + std::string(text) + "\"";
}

Status Bad(std::string_view name, std::string message) {
  return Error(StatusCode::kInvalidArgument,
               name.empty() ? message : std::string(name) + ": " + message);
}

// "-5" and "-1.5s": a number with a sign, which no option takes; said as out of range
// rather than as not a number.
bool IsNegativeNumber(std::string_view text) {
  double ignored = 0;
  std::string_view unit;
  return text.size() > 1 && text[0] == '-' && SplitNumber(text.substr(1), &ignored, &unit);
}

// `number` × `scale` as a whole count of the base unit, if it lies in [min, max]; rounds to
// the nearest (a typed "0.1s" is 100,000,000 ns however the double holds 0.1).
bool ScaleInRange(double number, uint64_t scale, uint64_t min, uint64_t max, uint64_t* out) {
  const double scaled = number * static_cast<double>(scale);
  // Also refuses infinity; a max near 2^64 rounds up as a double, hence the second test.
  if (!(scaled <= static_cast<double>(max)) || scaled >= 18446744073709551615.0) return false;
  const uint64_t value = static_cast<uint64_t>(scaled + 0.5);
  if (value < min || value > max) return false;
  *out = value;
  return true;
}

const Unit* FindUnit(std::span<const Unit> units, std::string_view name) {
  for (const Unit& unit : units) {
    if (unit.name == name) return &unit;
  }
  return nullptr;
}

std::string DurationExamples(const DurationSpec& spec) {
  if (spec.bare_ns == kNsPerSecond) return "2.5, 500ms, 1.5s, 2m";
  if (spec.bare_ns == 0) return "500us, 1.5ms, 2s, 2m";
  return "200 (" + DurationText(spec.bare_ns).substr(1) + "), 500ms, 1.5s, 2m";
}

std::string SizeExamples(const SizeSpec& spec) {
  if (spec.bare_bytes == 1) return "4096, 64KiB, 1.5GB";
  return "64 (" + SizeText(spec.bare_bytes).substr(1) + "), 512KiB, 1.5GiB";
}

std::string CountRange(const CountSpec& spec) {
  std::string range = spec.more_is_all
                          ? std::to_string(spec.min) + " or more (0: all)"
                          : std::to_string(spec.min) + " to " + std::to_string(spec.max);
  if (!spec.unit.empty()) range += " (e.g. 100" + std::string(spec.unit) + ")";
  return range;
}

// An exact whole number of digits only ("18446744073709551616" does not fit): from_chars,
// not a double, so that no digit is lost.
bool ExactDigits(std::string_view digits, uint64_t* value, bool* overflow) {
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), *value);
  *overflow = error == std::errc::result_out_of_range;
  return end == digits.data() + digits.size() && (error == std::errc() || *overflow);
}

// A duration or a size: a number and a unit of `units` (or none: `bare` of them each).
struct Scaled {
  const char* noun;  // "duration": what the messages call it
  std::span<const Unit> units;
  uint64_t bare;  // 0: a unit is needed (but for 0)
  uint64_t min, max;
  std::string range;     // "0 to 24h"
  std::string examples;  // "2.5, 500ms, 1.5s, 2m"
};

Result<uint64_t> ParseScaled(std::string_view name, std::string_view text, const Scaled& kind) {
  const std::string out_of_range = Quoted(text) + " is out of range; use " + kind.range;
  if (IsNegativeNumber(text)) return Bad(name, out_of_range);
  double number = 0;
  std::string_view unit_name;
  const std::string not_one =
      Quoted(text) + " is not a " + kind.noun + "; use e.g. " + kind.examples;
  if (!SplitNumber(text, &number, &unit_name)) return Bad(name, not_one);
  uint64_t scale = kind.bare;
  if (!unit_name.empty()) {
    const Unit* unit = FindUnit(kind.units, unit_name);
    if (unit == nullptr) return Bad(name, not_one);
    scale = unit->scale;
  } else if (scale == 0) {
    if (number != 0) return Bad(name, Quoted(text) + " needs a unit; use e.g. " + kind.examples);
    scale = 1;
  }
  uint64_t value = 0;
  if (!ScaleInRange(number, scale, kind.min, kind.max, &value)) return Bad(name, out_of_range);
  return value;
}

}  // namespace

bool SplitNumber(std::string_view text, double* number, std::string_view* unit) {
  size_t end = SkipDigits(text, 0);
  size_t digits = end;
  if (end < text.size() && text[end] == '.') {
    const size_t fraction = SkipDigits(text, end + 1);
    digits += fraction - end - 1;
    end = fraction;
  }
  if (digits == 0) return false;  // "", ".", "-1", "nan", "inf", "+2", " 2"
  if (end < text.size() && (text[end] == 'e' || text[end] == 'E')) {
    size_t exponent = end + 1;
    if (exponent < text.size() && (text[exponent] == '+' || text[exponent] == '-')) ++exponent;
    const size_t exponent_end = SkipDigits(text, exponent);
    if (exponent_end > exponent) end = exponent_end;  // else "1e" is 1 with unit "e"
  }
  const auto [parsed_end, error] =
      std::from_chars(text.data(), text.data() + end, *number, std::chars_format::general);
  if (parsed_end != text.data() + end) return false;
  if (error == std::errc::result_out_of_range) {
    // from_chars says only "out of range": a negative exponent means too small.
    const bool tiny = text.substr(0, end).find("e-") != std::string_view::npos ||
                      text.substr(0, end).find("E-") != std::string_view::npos;
    *number = tiny ? 0.0 : INFINITY;
  } else if (error != std::errc()) {
    return false;
  }
  size_t unit_start = end;
  while (unit_start < text.size() && text[unit_start] == ' ') ++unit_start;
  *unit = text.substr(unit_start);
  // "10 " has nothing after its space: trailing junk, not a number without unit.
  return !(unit->empty() && unit_start != end);
}

Result<uint64_t> ParseDurationNs(std::string_view name, std::string_view text,
                                 const DurationSpec& spec) {
  return ParseScaled(
      name, text,
      {"duration", kDurationUnits, spec.bare_ns, spec.min_ns, spec.max_ns,
       DurationText(spec.min_ns) + " to " + DurationText(spec.max_ns), DurationExamples(spec)});
}

Result<uint64_t> ParseBytes(std::string_view name, std::string_view text, const SizeSpec& spec) {
  return ParseScaled(
      name, text,
      {"size", kSizeUnits, spec.bare_bytes, spec.min_bytes, spec.max_bytes,
       SizeText(spec.min_bytes) + " to " + SizeText(spec.max_bytes), SizeExamples(spec)});
}

Result<uint64_t> ParseCount(std::string_view name, std::string_view text, const CountSpec& spec) {
  const std::string out_of_range = Quoted(text) + " is out of range; use " + CountRange(spec);
  if (IsNegativeNumber(text)) return Bad(name, out_of_range);
  double number = 0;
  std::string_view unit;
  const std::string not_one = Quoted(text) + " is not a whole number; use " + CountRange(spec);
  if (!SplitNumber(text, &number, &unit) || (!unit.empty() && unit != spec.unit)) {
    return Bad(name, not_one);
  }
  const std::string_view digits = text.substr(0, text.size() - unit.size());
  uint64_t value = 0;
  bool overflow = false;
  if (!ExactDigits(digits, &value, &overflow)) {
    // "1e3", "2.0": through the double, which holds every whole number up to 2^53 exactly.
    if (number != std::floor(number)) return Bad(name, not_one);
    overflow = !(number < 9007199254740992.0);
    if (!overflow) value = static_cast<uint64_t>(number);
  }
  if (overflow || value > spec.max) {
    if (spec.more_is_all) return 0;
    return Bad(name, out_of_range);
  }
  if (value < spec.min) return Bad(name, out_of_range);
  return value;
}

Result<double> ParsePercent(std::string_view name, std::string_view text, const PercentSpec& spec) {
  char bounds[64];
  std::snprintf(bounds, sizeof(bounds), "%g to %g", spec.min, spec.max);
  const std::string out_of_range = Quoted(text) + " is out of range; use " + bounds;
  if (IsNegativeNumber(text)) return Bad(name, out_of_range);
  double number = 0;
  std::string_view unit;
  if (!SplitNumber(text, &number, &unit) || !(unit.empty() || unit == "%")) {
    return Bad(name, Quoted(text) + " is not a percentage; use " + bounds + " (e.g. 0.5 or 0.5%)");
  }
  if (!(number >= spec.min && number <= spec.max)) return Bad(name, out_of_range);
  return number;
}

uint64_t CeilDiv(uint64_t value, uint64_t unit) {
  return value / unit + (value % unit != 0 ? 1 : 0);
}

std::string DurationText(uint64_t ns) {
  if (ns == 0) return "0";
  for (const Unit& unit : kDurationUnits) {
    if (unit.name != "min" && unit.name != "µs" && ns % unit.scale == 0) {
      return std::to_string(ns / unit.scale) + std::string(unit.name);
    }
  }
  return std::to_string(ns) + "ns";
}

std::string SizeText(uint64_t bytes) {
  if (bytes == 0) return "0";
  for (const Unit& unit : kSizeUnits) {
    if (unit.name.ends_with("iB") && bytes % unit.scale == 0) {
      return std::to_string(bytes / unit.scale) + std::string(unit.name);
    }
  }
  return std::to_string(bytes) + "B";
}

}  // namespace gpuperf
