#include "base/units.h"

#include <cstdio>

namespace gpuperf {
namespace {

// Three significant digits: 1.23, 12.3, 123.
std::string Significant(double value, const char* unit) {
  char buf[48];
  if (value >= 100) {
    std::snprintf(buf, sizeof(buf), "%.0f %s", value, unit);
  } else if (value >= 10) {
    std::snprintf(buf, sizeof(buf), "%.1f %s", value, unit);
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f %s", value, unit);
  }
  return buf;
}

}  // namespace

std::string FormatDuration(uint64_t ns) {
  if (ns < 1000) return std::to_string(ns) + " ns";
  if (ns < 1000000) return Significant(ns / 1e3, "µs");
  if (ns < 1000000000) return Significant(ns / 1e6, "ms");
  return Significant(ns / 1e9, "s");
}

std::string FormatBytes(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  if (bytes < (1ull << 20)) return Significant(bytes / 1024.0, "KiB");
  if (bytes < (1ull << 30)) return Significant(bytes / 1048576.0, "MiB");
  return Significant(bytes / 1073741824.0, "GiB");
}

std::string FormatBandwidth(uint64_t bytes, uint64_t ns) {
  if (ns == 0) return "-";
  const double bytes_per_second = static_cast<double>(bytes) * 1e9 / static_cast<double>(ns);
  if (bytes_per_second >= 1e9) return Significant(bytes_per_second / 1e9, "GB/s");
  if (bytes_per_second >= 1e6) return Significant(bytes_per_second / 1e6, "MB/s");
  return Significant(bytes_per_second / 1e3, "KB/s");
}

std::string FormatPercent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f%%", fraction * 100.0);
  return buf;
}

std::string FormatCount(uint64_t count) {
  std::string digits = std::to_string(count);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace gpuperf
