#include "inject/stack/unwind_verify.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "inject/log.h"
#include "unwind/unwind_table.h"

namespace gpuperf::inject {
namespace {

// "libfoo.so+0x1234" (the module's basename and the offset from its lowest address), or the
// bare address outside every known module.
void DescribePc(uint64_t pc, char* out, size_t size) {
  const UnwindSnapshot* snapshot = ProcessUnwindTables().snapshot();
  const ModuleUnwindTable* module = snapshot != nullptr ? snapshot->Find(pc - 1) : nullptr;
  if (module == nullptr) {
    std::snprintf(out, size, "0x%" PRIx64, pc);
    return;
  }
  const char* slash = std::strrchr(module->name.c_str(), '/');
  const char* base = slash != nullptr ? slash + 1 : module->name.c_str();
  std::snprintf(out, size, "%s+0x%" PRIx64, *base != '\0' ? base : "(program)", pc - module->start);
}

}  // namespace

int FirstDifference(const uint64_t* a, int a_depth, const uint64_t* b, int b_depth) {
  const int common = a_depth < b_depth ? a_depth : b_depth;
  for (int i = 0; i < common; ++i) {
    if (a[i] != b[i]) return i;
  }
  return a_depth == b_depth ? -1 : common;
}

void LogDisagreementOnce(const char* walk, const uint64_t* pcs, int depth,
                         const uint64_t* reference, int reference_depth, int at) {
  char mine[160] = "(none)", theirs[160] = "(none)";
  if (at < depth) DescribePc(pcs[at], mine, sizeof(mine));
  if (at < reference_depth) DescribePc(reference[at], theirs, sizeof(theirs));
  LogOnce("unwind check: the %s walk differs from libunwind at frame %d (of %d and %d): %s vs %s",
          walk, at, depth, reference_depth, mine, theirs);
}

void NoteFallbackOnce(const TableWalkResult& walk, bool verify) {
  if (!verify || walk.stop == TableWalkStop::kPending || walk.stop == TableWalkStop::kNoTables ||
      walk.stop == TableWalkStop::kUnknownModule) {
    return;
  }
  char frame[160];
  DescribePc(walk.at_stop.rip, frame, sizeof(frame));
  LogOnce("unwind check: a table walk first fell back to libunwind at %s (%s)", frame,
          TableWalkStopName(walk.stop));
}

}  // namespace gpuperf::inject
