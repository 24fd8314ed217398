#include "cli/wall_clock.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "base/quantity.h"

namespace gpuperf::cli {
namespace {

constexpr uint64_t kPastSlackNs = kNsPerSecond;

Status Bad(std::string_view text) {
  return Error(StatusCode::kInvalidArgument,
               "--at: \"" + std::string(text) +
                   "\" is not a time; use HH:MM:SS, YYYY-MM-DDTHH:MM:SS[Z], @EPOCH_SECONDS or "
                   "+DURATION (e.g. 14:30:00, +10s)");
}

// "SS" or "SS.FFF" (up to 9 digits): seconds and nanoseconds; false on anything else.
bool ParseSeconds(const std::string& text, int* seconds, uint64_t* ns) {
  const size_t dot = text.find('.');
  const std::string whole = text.substr(0, dot);
  if (whole.empty() || whole.size() > 2 ||
      whole.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  *seconds = std::atoi(whole.c_str());
  *ns = 0;
  if (dot == std::string::npos) return *seconds < 61;
  const std::string fraction = text.substr(dot + 1);
  if (fraction.empty() || fraction.size() > 9 ||
      fraction.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  uint64_t scale = kNsPerSecond;
  for (char digit : fraction) {
    scale /= 10;
    *ns += static_cast<uint64_t>(digit - '0') * scale;
  }
  return *seconds < 61;
}

// "HH:MM[:SS[.FFF]]" into `tm` and `ns`.
bool ParseClock(const std::string& text, std::tm* tm, uint64_t* ns) {
  int hours = 0, minutes = 0, consumed = 0;
  if (std::sscanf(text.c_str(), "%2d:%2d%n", &hours, &minutes, &consumed) != 2 || hours > 23 ||
      minutes > 59 || hours < 0 || minutes < 0) {
    return false;
  }
  tm->tm_hour = hours;
  tm->tm_min = minutes;
  tm->tm_sec = 0;
  *ns = 0;
  if (static_cast<size_t>(consumed) == text.size()) return true;
  if (text[static_cast<size_t>(consumed)] != ':') return false;
  return ParseSeconds(text.substr(static_cast<size_t>(consumed) + 1), &tm->tm_sec, ns);
}

Result<uint64_t> NotPast(std::string_view text, uint64_t at_ns, uint64_t now_ns) {
  if (at_ns + kPastSlackNs < now_ns) {
    return Error(StatusCode::kInvalidArgument, "--at " + std::string(text) + " is " +
                                                   std::to_string((now_ns - at_ns) / kNsPerSecond) +
                                                   " s in the past");
  }
  return at_ns;
}

}  // namespace

Result<uint64_t> ParseWallClock(std::string_view text, uint64_t now_ns) {
  if (text.empty()) return Bad(text);
  if (text[0] == '+') {
    GP_ASSIGN_OR_RETURN(
        uint64_t delay,
        ParseDurationNs("--at", text.substr(1), DurationSpec{kNsPerSecond, 0, kMaxDurationNs}));
    return now_ns + delay;
  }
  if (text[0] == '@') {
    const std::string epoch(text.substr(1));
    const size_t dot = epoch.find('.');
    const std::string whole = epoch.substr(0, dot);
    int ignored = 0;
    uint64_t ns = 0;
    if (whole.empty() || whole.find_first_not_of("0123456789") != std::string::npos ||
        whole.size() > 12 ||
        (dot != std::string::npos && !ParseSeconds("0" + epoch.substr(dot), &ignored, &ns))) {
      return Bad(text);
    }
    return NotPast(text, std::strtoull(whole.c_str(), nullptr, 10) * kNsPerSecond + ns, now_ns);
  }
  std::string value(text);
  const time_t now_s = static_cast<time_t>(now_ns / kNsPerSecond);
  std::tm tm{};
  uint64_t ns = 0;
  const size_t split = value.find_first_of("T ");
  if (split == std::string::npos) {
    localtime_r(&now_s, &tm);  // today's date
    if (!ParseClock(value, &tm, &ns)) return Bad(text);
    tm.tm_isdst = -1;
    const time_t at = mktime(&tm);
    if (at == static_cast<time_t>(-1)) return Bad(text);
    return NotPast(text, static_cast<uint64_t>(at) * kNsPerSecond + ns, now_ns);
  }
  bool utc = false;
  if (value.back() == 'Z') {
    utc = true;
    value.pop_back();
  }
  int year = 0, month = 0, day = 0, consumed = 0;
  if (std::sscanf(value.c_str(), "%4d-%2d-%2d%n", &year, &month, &day, &consumed) != 3 ||
      static_cast<size_t>(consumed) != split || month < 1 || month > 12 || day < 1 || day > 31) {
    return Bad(text);
  }
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  if (!ParseClock(value.substr(split + 1), &tm, &ns)) return Bad(text);
  tm.tm_isdst = -1;
  const time_t at = utc ? timegm(&tm) : mktime(&tm);
  if (at == static_cast<time_t>(-1)) return Bad(text);
  return NotPast(text, static_cast<uint64_t>(at) * kNsPerSecond + ns, now_ns);
}

}  // namespace gpuperf::cli
