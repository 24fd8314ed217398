// CUPTI's PC sampling stall reasons come in pairs on current GPUs: "..._wait" counts every
// sample of a warp stalled on a wait, "..._wait_not_issued" the part of those in which its
// scheduler issued no instruction at all. The second is a subset of the first (the H100 run
// of hw_bound: no_instructions 30.4% and no_instructions_not_issued 30.4% of one line), so
// adding both counts those samples twice: totals and shares use the first kind only.
#pragma once

#include <string_view>

namespace gpuperf {

inline bool IsNotIssuedStall(std::string_view stall_name) {
  return stall_name.ends_with("_not_issued");
}

}  // namespace gpuperf
