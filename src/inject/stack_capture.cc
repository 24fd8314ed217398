// Interim stack capture: libunwind's unw_backtrace (dlopen'ed) or _Unwind_Backtrace,
// and a mutex-guarded intern table. Replaced by src/inject/stack/ (lock-free table,
// module-range frame filter) when that lands.
#include "inject/stack_capture.h"

#include <dlfcn.h>
#include <link.h>
#include <unwind.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

using UnwBacktraceFn = int (*)(void**, int);
UnwBacktraceFn g_unw_backtrace = nullptr;
uint32_t g_max_depth = 64;

struct Range {
  uintptr_t start, end;
};
// Frames inside these modules (gpuperf itself, CUPTI, the driver) are trimmed from the
// inner end of a stack: users care about the code that called CUDA.
Range g_skip[8];
int g_skip_count = 0;

struct UnwindState {
  void** pcs;
  int depth;
  int max;
};

_Unwind_Reason_Code CollectFrame(struct _Unwind_Context* context, void* arg) {
  auto* state = static_cast<UnwindState*>(arg);
  if (state->depth >= state->max) return _URC_END_OF_STACK;
  state->pcs[state->depth++] = reinterpret_cast<void*>(_Unwind_GetIP(context));
  return _URC_NO_REASON;
}

int FindSkipModules(struct dl_phdr_info* info, size_t, void*) {
  std::string_view path = info->dlpi_name ? info->dlpi_name : "";
  size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  if (!(base.starts_with("libgpuperf_inject") || base.starts_with("libcupti.so") ||
        base.starts_with("libcuda.so"))) {
    return 0;
  }
  for (int i = 0; i < info->dlpi_phnum && g_skip_count < 8; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    g_skip[g_skip_count++] = {info->dlpi_addr + ph.p_vaddr,
                              info->dlpi_addr + ph.p_vaddr + ph.p_memsz};
  }
  return 0;
}

bool Skipped(uintptr_t pc) {
  for (int i = 0; i < g_skip_count; ++i) {
    if (pc >= g_skip[i].start && pc < g_skip[i].end) return true;
  }
  return false;
}

struct StackKeyHash {
  size_t operator()(const std::string& key) const { return std::hash<std::string>{}(key); }
};

std::mutex g_mutex;
std::unordered_map<std::string, StackId, StackKeyHash> g_ids;
std::vector<StackRecord> g_new;
StackId g_next = 1;

}  // namespace

void InitStackCapture(uint32_t max_depth) {
  g_max_depth = max_depth < 256 ? max_depth : 256;
  // RTLD_LOCAL: libunwind exports weak backtrace/_Unwind_Backtrace that must not
  // interpose on the application's.
  // gpuperf ships a copy beside itself for hosts without one (the CUDA images lack it).
  void* lib = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  Dl_info self;
  if (lib == nullptr && dladdr(reinterpret_cast<void*>(&InitStackCapture), &self) &&
      self.dli_fname != nullptr) {
    std::string dir = self.dli_fname;
    dir.resize(dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/') + 1);
    lib = dlopen((dir + "libunwind.so.8").c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (lib != nullptr) {
    g_unw_backtrace = reinterpret_cast<UnwBacktraceFn>(dlsym(lib, "unw_backtrace"));
  }
  g_skip_count = 0;
  dl_iterate_phdr(FindSkipModules, nullptr);
}

const char* StackUnwinderName() {
  return g_unw_backtrace ? "libunwind" : "libgcc _Unwind_Backtrace";
}

StackId CaptureLaunchStack() {
  void* raw[256 + 16];
  int depth = 0;
  const int max = static_cast<int>(g_max_depth) + 16;
  if (g_unw_backtrace != nullptr) {
    depth = g_unw_backtrace(raw, max);
  } else {
    UnwindState state{raw, 0, max};
    _Unwind_Backtrace(CollectFrame, &state);
    depth = state.depth;
  }
  // The outermost frame is sometimes reported as PC 0: not a frame.
  while (depth > 0 && raw[depth - 1] == nullptr) --depth;
  int first = 0;
  while (first < depth && Skipped(reinterpret_cast<uintptr_t>(raw[first]))) ++first;
  if (depth - first <= 0) {
    CountStat(StatId::unwind_failed);
    return 0;
  }
  const int kept = std::min(depth - first, static_cast<int>(g_max_depth));
  std::string key(reinterpret_cast<const char*>(raw + first), kept * sizeof(void*));
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_ids.find(key);
  if (it != g_ids.end()) return it->second;
  StackRecord stack;
  stack.id = g_next++;
  stack.pcs.resize(kept);
  for (int i = 0; i < kept; ++i) stack.pcs[i] = reinterpret_cast<uintptr_t>(raw[first + i]);
  g_ids.emplace(std::move(key), stack.id);
  g_new.push_back(std::move(stack));
  CountStat(StatId::unique_stacks);
  return g_new.back().id;
}

void DrainNewStacks(std::vector<StackRecord>& out, uint32_t pid) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (StackRecord& stack : g_new) {
    stack.pid = pid;
    out.push_back(std::move(stack));
  }
  g_new.clear();
}

}  // namespace gpuperf::inject
