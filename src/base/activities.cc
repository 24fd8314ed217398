#include "base/activities.h"

namespace gpuperf {
namespace {

struct ActivityName {
  const char* name;
  uint32_t bit;
};

constexpr ActivityName kActivityNames[] = {
    {"kernel", kActKernel},   {"memcpy", kActMemcpy}, {"memset", kActMemset},
    {"runtime", kActRuntime}, {"driver", kActDriver}, {"sync", kActSync},
    {"memory", kActMemory},   {"nvtx", kActNvtx},     {"overhead", kActOverhead},
    {"graph", kActGraph},
};

}  // namespace

bool ParseActivities(const std::string& text, uint32_t* bits, std::string* bad_name) {
  uint32_t result = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) continue;
    if (item == "all") {
      for (const auto& a : kActivityNames) result |= a.bit;
      continue;
    }
    if (item == "default") {
      result |= kDefaultActivities;
      continue;
    }
    bool found = false;
    for (const auto& a : kActivityNames) {
      if (item == a.name) {
        result |= a.bit;
        found = true;
      }
    }
    if (!found) {
      *bad_name = item;
      return false;
    }
  }
  *bits = result;
  return true;
}

}  // namespace gpuperf
