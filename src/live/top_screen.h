// The screen of `gpuperf top` as lines of plain text (no escape codes): the devices as NVML
// sees them, one row per process and device with its rates, then the top kernels and APIs.
// The interactive view paints these lines; `--once --format text` prints them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "live/live_model.h"

namespace gpuperf::live {

enum class TopSort { kActive, kLaunches, kMemory, kApi, kPid };

// "active", "launches", ... as shown in the title line.
const char* TopSortName(TopSort sort);

struct TopScreenOptions {
  TopSort sort = TopSort::kActive;
  size_t width = 120;        // characters per line; 0: no limit
  size_t height = 0;         // lines; 0: as many as the content needs
  bool interactive = false;  // the title names the keys
};

std::vector<std::string> RenderTopScreen(const LiveModel& model, const TopScreenOptions& options);

}  // namespace gpuperf::live
