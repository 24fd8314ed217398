// The launch-stack path: unwind (src/inject/stack/unwinder), trim the frames of
// gpuperf, CUPTI, the driver and the runtime (FrameFilter), intern (StackTable, a
// lock-free lookup for stacks seen before).
#include "inject/stack_capture.h"

#include "base/module_table.h"
#include "inject/stack/stack_table.h"
#include "inject/stack/unwinder.h"
#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

constexpr int kMaxRawDepth = 256 + 32;  // room for the frames the filter trims
uint32_t g_max_depth = 64;
FrameFilter g_filter;
StackTable* g_table = nullptr;

}  // namespace

void InitStackCapture(uint32_t max_depth) {
  g_max_depth = max_depth < 256 ? max_depth : 256;
  InitUnwinder();
  ModuleTable modules;
  modules.Refresh();
  // Configured once, before callbacks are enabled: the filter is read unsynchronized.
  g_filter.Configure(modules.modules(), FrameFilter::DefaultSkipPrefixes());
  static StackTable table;
  g_table = &table;
}

const char* StackUnwinderName() {
  return UnwinderName();
}

StackId CaptureLaunchStack() {
  uint64_t pcs[kMaxRawDepth];
  int depth = CaptureStack(pcs, static_cast<int>(g_max_depth) + 32);
  depth = g_filter.Trim(pcs, depth);
  if (depth <= 0 || g_table == nullptr) {
    CountStat(StatId::unwind_failed);
    return 0;
  }
  if (depth > static_cast<int>(g_max_depth)) depth = static_cast<int>(g_max_depth);
  bool inserted = false;
  StackId id = g_table->Intern(pcs, depth, &inserted);
  if (id == 0) {
    CountStat(StatId::stack_table_full);
  } else if (inserted) {
    CountStat(StatId::unique_stacks);
  }
  return id;
}

void DrainNewStacks(std::vector<StackRecord>& out, uint32_t pid) {
  if (g_table != nullptr) g_table->DrainNew(pid, out);
}

}  // namespace gpuperf::inject
