// Verify mode (GPUPERF_UNWIND_VERIFY=1): what the launch-stack path says when the frame-pointer
// or table walk of a stack differs from libunwind's, or when a table walk falls back. One
// line per kind of event, at most, naming frames as module+offset.
#pragma once

#include <cstdint>

#include "unwind/table_unwinder.h"

namespace gpuperf::inject {

// Index of the first frame where the two stacks differ (the shorter one's depth when one is
// a prefix of the other); -1 when they are the same.
int FirstDifference(const uint64_t* a, int a_depth, const uint64_t* b, int b_depth);

// "the <walk> walk differs from libunwind at frame N: <pc> vs <pc>", once per process.
void LogDisagreementOnce(const char* walk, const uint64_t* pcs, int depth,
                         const uint64_t* reference, int reference_depth, int at);

// In verify mode, says once where a table walk first fell back for a reason other than a
// table not built yet (those are expected while the builder works): the frame and why.
void NoteFallbackOnce(const TableWalkResult& walk, bool verify);

}  // namespace gpuperf::inject
