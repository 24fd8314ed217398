#include "analyze/quantity.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace gpuperf {

bool SplitNumber(std::string_view text, double* number, std::string_view* suffix) {
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) {
    ++end;
  }
  if (end == 0) return false;
  const std::string digits(text.substr(0, end));
  char* parsed_end = nullptr;
  *number = std::strtod(digits.c_str(), &parsed_end);
  if (parsed_end != digits.c_str() + digits.size() || !std::isfinite(*number)) return false;
  *suffix = text.substr(end);
  return true;
}

Result<uint64_t> ParseDurationNs(std::string_view text) {
  double value = 0;
  std::string_view unit;
  if (!SplitNumber(text, &value, &unit)) {
    return Error(StatusCode::kInvalidArgument,
                 "'" + std::string(text) + "' is not a duration (e.g. 500us, 1.5ms, 2s)");
  }
  double scale = 0;
  if (unit == "ns") {
    scale = 1;
  } else if (unit == "us" || unit == "µs") {
    scale = 1e3;
  } else if (unit == "ms") {
    scale = 1e6;
  } else if (unit == "s") {
    scale = 1e9;
  } else if (unit == "min") {
    scale = 60e9;
  } else if (unit.empty() && value == 0) {
    scale = 1;
  } else {
    return Error(StatusCode::kInvalidArgument,
                 "'" + std::string(text) + "' needs a time unit: ns, us, ms, s or min");
  }
  return static_cast<uint64_t>(std::llround(value * scale));
}

Result<uint64_t> ParseBytes(std::string_view text) {
  double value = 0;
  std::string_view unit;
  if (!SplitNumber(text, &value, &unit)) {
    return Error(StatusCode::kInvalidArgument,
                 "'" + std::string(text) + "' is not a size (e.g. 4096, 64KiB, 1.5GB)");
  }
  double scale = 0;
  if (unit.empty() || unit == "B") {
    scale = 1;
  } else if (unit == "KB") {
    scale = 1e3;
  } else if (unit == "MB") {
    scale = 1e6;
  } else if (unit == "GB") {
    scale = 1e9;
  } else if (unit == "KiB") {
    scale = 1024.0;
  } else if (unit == "MiB") {
    scale = 1048576.0;
  } else if (unit == "GiB") {
    scale = 1073741824.0;
  } else {
    return Error(
        StatusCode::kInvalidArgument,
        "'" + std::string(text) + "' has an unknown size unit (B, KB, MB, GB, KiB, MiB, GiB)");
  }
  return static_cast<uint64_t>(std::llround(value * scale));
}

}  // namespace gpuperf
