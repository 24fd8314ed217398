// The part of stack_capture_unwind_test that lives in libgpuperf_inject_unwind_test.so beside
// the capture code: the stats table, which injection.cc defines in the real library.
#include "inject/stats.h"

namespace gpuperf::inject {

std::atomic<uint64_t> g_stats[kStatSlots];

}  // namespace gpuperf::inject
