// `gpuperf top --once --format json`: every process's totals (exact integers: ns, bytes,
// counts), its rates, devices joined with NVML, top kernels, APIs and drops.
#pragma once

#include <string>

#include "live/live_model.h"

namespace gpuperf::live {

std::string LiveModelJson(const LiveModel& model);

}  // namespace gpuperf::live
