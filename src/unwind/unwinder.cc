#include "unwind/unwinder.h"

#include <dlfcn.h>
#include <pthread.h>

#include <execinfo.h>
#include <unwind.h>
#include <string>

#include <atomic>
#include <cstring>
#include <mutex>

namespace gpuperf {
namespace {

static_assert(sizeof(void*) == sizeof(uint64_t), "PCs are stored as 64-bit values");

using UnwBacktraceFn = int (*)(void** buffer, int size);
using UnwSetCachingPolicyFn = int (*)(void* address_space, int policy);
constexpr int kUnwCachePerThread = 2;  // UNW_CACHE_PER_THREAD in libunwind.h

// Set once under g_init; read on every capture.
std::atomic<UnwinderKind> g_kind{UnwinderKind::kNone};
UnwBacktraceFn g_unw_backtrace = nullptr;
std::once_flag g_init;

bool LoadLibunwind() {
  if (g_unw_backtrace != nullptr) return true;
  // RTLD_LOCAL keeps libunwind's weak backtrace/_Unwind_Backtrace out of the global scope.
  void* handle = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
  // gpuperf ships a copy beside the injection library for hosts without one (the CUDA
  // images lack it); without it every launch pays ~15x more for its stack.
  Dl_info self;
  if (handle == nullptr && dladdr(reinterpret_cast<void*>(&LoadLibunwind), &self) &&
      self.dli_fname != nullptr) {
    std::string path = self.dli_fname;
    const size_t slash = path.rfind('/');
    path =
        (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + "libunwind.so.8";
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (handle == nullptr) return false;
  auto backtrace_fn = reinterpret_cast<UnwBacktraceFn>(dlsym(handle, "unw_backtrace"));
  if (backtrace_fn == nullptr) {
    dlclose(handle);
    return false;
  }
  // The default (global) cache takes a lock on every step; a per-thread cache does not.
  auto set_policy =
      reinterpret_cast<UnwSetCachingPolicyFn>(dlsym(handle, "_ULx86_64_set_caching_policy"));
  void* local_space = dlsym(handle, "_ULx86_64_local_addr_space");
  if (set_policy != nullptr && local_space != nullptr) {
    set_policy(*static_cast<void**>(local_space), kUnwCachePerThread);
  }
  g_unw_backtrace = backtrace_fn;  // the handle stays open for the life of the process
  return true;
}

struct UnwindState {
  void** pcs;
  int depth;
  int max_depth;
};

_Unwind_Reason_Code CollectFrame(struct _Unwind_Context* context, void* arg) {
  auto* state = static_cast<UnwindState*>(arg);
  if (state->depth >= state->max_depth) return _URC_END_OF_STACK;
  uintptr_t ip = _Unwind_GetIP(context);
  if (ip == 0) return _URC_END_OF_STACK;
  state->pcs[state->depth++] = reinterpret_cast<void*>(ip);
  return _URC_NO_REASON;
}

int RawCapture(UnwinderKind kind, void** buffer, int size) {
  switch (kind) {
    case UnwinderKind::kLibunwind:
      return g_unw_backtrace(buffer, size);
    case UnwinderKind::kLibgcc: {
      UnwindState state{buffer, 0, size};
      _Unwind_Backtrace(CollectFrame, &state);
      return state.depth;
    }
    case UnwinderKind::kGlibcBacktrace:
      return backtrace(buffer, size);
    case UnwinderKind::kNone:
      break;
  }
  return 0;
}

}  // namespace

UnwinderKind InitUnwinder() {
  std::call_once(g_init, [] {
    if (g_kind.load(std::memory_order_relaxed) != UnwinderKind::kNone) return;  // forced
    g_kind.store(LoadLibunwind() ? UnwinderKind::kLibunwind : UnwinderKind::kLibgcc,
                 std::memory_order_release);
  });
  return g_kind.load(std::memory_order_acquire);
}

bool UseUnwinder(UnwinderKind kind) {
  if (kind == UnwinderKind::kNone) return false;
  if (kind == UnwinderKind::kLibunwind && !LoadLibunwind()) return false;
  g_kind.store(kind, std::memory_order_release);
  return true;
}

__attribute__((noinline)) int CaptureStack(uint64_t* pcs, int max_depth) {
  UnwinderKind kind = g_kind.load(std::memory_order_acquire);
  if (kind == UnwinderKind::kNone) kind = InitUnwinder();
  if (max_depth <= 0) return 0;
  if (max_depth > kMaxCapturedFrames) max_depth = kMaxCapturedFrames;

  // The unwinders start inside themselves or inside this function, at a depth that
  // differs between them; our caller's frame is the one that holds our return address.
  constexpr int kSlack = 4;
  void* buffer[kMaxCapturedFrames + kSlack];
  int n = RawCapture(kind, buffer, max_depth + kSlack);
  void* return_address = __builtin_extract_return_addr(__builtin_return_address(0));
  int first = 0;
  while (first < n && first < kSlack && buffer[first] != return_address) ++first;
  if (first == n || first == kSlack) return 0;  // our own frame was not found: unusable
  int depth = n - first < max_depth ? n - first : max_depth;
  std::memcpy(pcs, buffer + first, sizeof(uint64_t) * static_cast<size_t>(depth));
  return depth;
}

namespace {

struct StackBounds {
  uintptr_t low = 0, high = 0;  // high == 0: unknown
  bool asked = false;           // pthread_getattr_np runs once per thread, even if it fails
};
thread_local StackBounds t_stack_bounds;

}  // namespace
bool ThreadStackBounds(uintptr_t* low, uintptr_t* high) {
  StackBounds& bounds = t_stack_bounds;
  if (!bounds.asked) {
    bounds.asked = true;
    pthread_attr_t attr;
    void* base = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      if (pthread_attr_getstack(&attr, &base, &size) == 0 && size > 0) {
        bounds.low = reinterpret_cast<uintptr_t>(base);
        bounds.high = bounds.low + size;
      }
      pthread_attr_destroy(&attr);
    }
  }
  *low = bounds.low;
  *high = bounds.high;
  return bounds.high != 0;
}

__attribute__((noinline)) int FramePointerWalk(uint64_t* pcs, int max_depth) {
  uintptr_t low = 0, high = 0;
  if (max_depth <= 0 || !ThreadStackBounds(&low, &high)) return 0;
  // Our own frame record: [fp] = the caller's frame pointer, [fp + 8] = our return address.
  auto fp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  int depth = 0;
  while (depth < max_depth && fp >= low && fp <= high - 16 && (fp & 7) == 0) {
    const auto* record = reinterpret_cast<const uintptr_t*>(fp);
    const uintptr_t next = record[0], return_address = record[1];
    if (return_address == 0) break;
    pcs[depth++] = return_address;
    if (next <= fp) break;  // frames grow toward higher addresses; 0 ends the chain
    fp = next;
  }
  return depth;
}

UnwinderKind CurrentUnwinder() {
  return g_kind.load(std::memory_order_acquire);
}

const char* UnwinderName() {
  switch (CurrentUnwinder()) {
    case UnwinderKind::kLibunwind:
      return "libunwind";
    case UnwinderKind::kLibgcc:
      return "libgcc";
    case UnwinderKind::kGlibcBacktrace:
      return "glibc-backtrace";
    case UnwinderKind::kNone:
      break;
  }
  return "none";
}

const std::vector<std::string_view>& FrameFilter::DefaultSkipPrefixes() {
  // libcudart too: with the shared runtime its frames sit between the application's call
  // and the driver; the launch link names the API, so the frames add nothing.
  static const std::vector<std::string_view> kPrefixes = {"libgpuperf_inject", "libcupti.so",
                                                          "libcuda.so", "libcudart.so"};
  return kPrefixes;
}

bool FrameFilter::BasenameHasPrefix(std::string_view path,
                                    const std::vector<std::string_view>& prefixes) {
  size_t slash = path.rfind('/');
  std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (std::string_view prefix : prefixes) {
    if (base.starts_with(prefix)) return true;
  }
  return false;
}

bool FrameFilter::AddRange(uint64_t start, uint64_t end) {
  if (count_ >= kMaxRanges || start >= end) return false;
  ranges_[count_++] = {start, end};
  return true;
}

int FrameFilter::Trim(uint64_t* pcs, int depth) const {
  int first = FirstKept(pcs, depth);
  if (first == 0) return depth;
  std::memmove(pcs, pcs + first, sizeof(uint64_t) * static_cast<size_t>(depth - first));
  return depth - first;
}

}  // namespace gpuperf
