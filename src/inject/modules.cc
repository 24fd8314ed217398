#include "inject/modules.h"

#include <algorithm>

#include "gpuperf/python_frame_word.h"
#include "gpuperf/stack_marker.h"
#include "inject/stats.h"

namespace gpuperf::inject {

void ModuleTracker::Refresh(uint32_t pid, NameTable& names, std::vector<ModuleRecord>& out) {
  table_.Refresh();
  std::vector<LoadedModule> fresh;
  table_.DrainNew(fresh);
  for (const ModuleRecord& record : ToModuleRecords(
           fresh, pid, [&names](std::string_view text) { return names.Intern(text); })) {
    out.push_back(record);
  }
  SetStat(StatId::module_refreshes, table_.refreshes());
}

bool ModuleTracker::NeedsRefresh(const std::vector<StackRecord>& stacks) const {
  for (const StackRecord& stack : stacks) {
    // Only the native PCs: the Python frames after them are code ids, in no module, and a
    // backward launch's forward frames follow a marker word.
    const auto native_end = std::find_if(stack.pcs.begin(), stack.pcs.end(), [](uint64_t word) {
      return IsPythonFrameWord(word) || IsStackMarkerWord(word);
    });
    if (!table_.ContainsAll(stack.pcs.data(), static_cast<int>(native_end - stack.pcs.begin()))) {
      return true;
    }
  }
  return false;
}

}  // namespace gpuperf::inject
