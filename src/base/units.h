// Human-readable units for reports and labels: durations, byte counts, rates.
#pragma once

#include <cstdint>
#include <string>

namespace gpuperf {

// "850 ns", "12.3 µs", "4.56 ms", "1.23 s" (three significant digits).
std::string FormatDuration(uint64_t ns);
// "512 B", "1.50 KiB", "3.20 MiB", "1.07 GiB".
std::string FormatBytes(uint64_t bytes);
// Bandwidth from bytes moved in ns: "12.3 GB/s" (decimal, as NVIDIA reports bandwidth).
std::string FormatBandwidth(uint64_t bytes, uint64_t ns);
// "12.3%" with one decimal.
std::string FormatPercent(double fraction);
// 1234567 -> "1,234,567".
std::string FormatCount(uint64_t count);

}  // namespace gpuperf
