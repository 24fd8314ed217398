// libgpuperf_preload.so: `gpuperf record` adds it to the program's LD_PRELOAD so that it stands
// in front of cuptiSubscribe and cuptiSubscribe_v2.
//
// Why: CUPTI has a single callback subscriber slot, and gpuperf takes it when CUDA starts. A
// profiler inside the program that starts later (torch.profiler's Kineto) is refused with
// CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, but CUPTI does not tell the holder, and the
// injection library (loaded late by libcuda) cannot see other libraries' calls. A preloaded
// definition comes first in the global lookup scope, so such a call passes through here: the
// real function runs, its result goes back unchanged, and a refusal while gpuperf holds the
// slot is counted (for the trace's stats, src/inject/preload_stats.cc) and said in one line.
//
// It stands in front of cuptiActivityRegisterCallbacks too: a client that registers its own
// activity buffers after gpuperf did takes CUPTI's records from then on. With gpuperf's
// callbacks on, the injection library notices that by itself (a thread's launches outrun
// its last buffer); without them (record --no-stacks and no API records) only this call
// shows it. It is counted here and said by the injection library, once, either way.
//
// A guest in every process `record` starts, CUDA or not: nothing runs at load time, nothing is
// allocated, and it depends on libc alone.
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "preload/preload_abi.h"

extern "C" {
std::atomic<unsigned long long> gpuperf_preload_cupti_refusals{0};
std::atomic<unsigned long long> gpuperf_preload_buffer_takeovers{0};
}

namespace {

using SubscribeFn = CUptiResult(CUPTIAPI*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*);
using SubscribeV2Fn = CUptiResult(CUPTIAPI*)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*,
                                             CUpti_SubscriberParams*);

// The name gpuperf's injection library subscribes with (src/inject/cupti/callbacks.cc).
constexpr const char kGpuperfSubscriber[] = "gpuperf";

std::atomic<bool> g_gpuperf_holds_slot{false};
std::atomic<bool> g_refusal_said{false};

// The file name of a loaded object's path.
const char* FileName(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

struct LoadedCupti {
  char path[4096];
  bool found;
};

int FindLoadedCupti(dl_phdr_info* info, size_t, void* data) {
  const char* name = info->dlpi_name;
  if (name == nullptr) return 0;
  if (std::strncmp(FileName(name), "libcupti.so", 11) != 0 ||
      std::strlen(name) >= sizeof(LoadedCupti::path))
    return 0;
  auto* loaded = static_cast<LoadedCupti*>(data);
  std::memcpy(loaded->path, name, std::strlen(name) + 1);
  loaded->found = true;
  return 1;
}

// The real `symbol`: the next definition after this library in the global scope, or, where a
// dlopen'ed library brought libcupti in with RTLD_LOCAL (PyTorch's libtorch_cuda.so does, where
// RTLD_NEXT does not look), the one in the libcupti already loaded. Null if there is none.
void* FindReal(const char* symbol, const void* wrapper) {
  void* real = dlsym(RTLD_NEXT, symbol);
  if (real != nullptr && real != wrapper) return real;
  LoadedCupti loaded{};
  dl_iterate_phdr(FindLoadedCupti, &loaded);
  if (!loaded.found) return nullptr;
  // Outside dl_iterate_phdr's callback, which runs under the loader's lock.
  void* handle = dlopen(loaded.path, RTLD_NOLOAD | RTLD_LAZY);
  if (handle == nullptr) return nullptr;
  real = dlsym(handle, symbol);
  if (real == nullptr || real == wrapper) {
    dlclose(handle);
    return nullptr;
  }
  return real;  // the reference stays: the library must outlive the pointer
}

template <class Fn>
Fn Resolve(std::atomic<Fn>& cache, const char* symbol, const void* wrapper) {
  Fn fn = cache.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = reinterpret_cast<Fn>(FindReal(symbol, wrapper));
    if (fn != nullptr) cache.store(fn, std::memory_order_release);
  }
  return fn;
}

bool Quiet() {
  const char* level = std::getenv("GPUPERF_LOG");
  return level != nullptr && std::strcmp(level, "quiet") == 0;
}

// One write(), in the injection library's style (src/inject/log.cc).
void SayRefused() {
  char line[512];
  const int n = std::snprintf(
      line, sizeof(line),
      "gpuperf[%d]: another CUPTI client (torch.profiler? Kineto?) was refused CUPTI's "
      "callbacks, which gpuperf holds: its own trace will have no CUDA events; use one profiler "
      "at a time (run the program without `gpuperf record`, or record it without its "
      "profiler)\n",
      static_cast<int>(getpid()));
  if (n <= 0) return;
  const size_t length = static_cast<size_t>(n) < sizeof(line) ? n : sizeof(line) - 1;
  ssize_t ignored = write(STDERR_FILENO, line, length);
  (void)ignored;
}

void NoteResult(CUptiResult result, bool from_gpuperf) {
  if (from_gpuperf) {
    if (result == CUPTI_SUCCESS) g_gpuperf_holds_slot.store(true, std::memory_order_release);
    return;
  }
  // Refused by someone else (Nsight, the program's own first client): not gpuperf's to say.
  if (result != CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ||
      !g_gpuperf_holds_slot.load(std::memory_order_acquire)) {
    return;
  }
  gpuperf_preload_cupti_refusals.fetch_add(1, std::memory_order_relaxed);
  if (g_refusal_said.exchange(true) || Quiet()) return;
  SayRefused();
}

bool IsGpuperf(const CUpti_SubscriberParams* params) {
  constexpr size_t kNameEnd =
      offsetof(CUpti_SubscriberParams, subscriberName) + sizeof(params->subscriberName);
  return params != nullptr && params->structSize >= kNameEnd && params->subscriberName != nullptr &&
         std::strcmp(params->subscriberName, kGpuperfSubscriber) == 0;
}

std::atomic<SubscribeFn> g_subscribe{nullptr};
std::atomic<SubscribeV2Fn> g_subscribe_v2{nullptr};

using RegisterFn = CUptiResult(CUPTIAPI*)(CUpti_BuffersCallbackRequestFunc,
                                          CUpti_BuffersCallbackCompleteFunc);
std::atomic<RegisterFn> g_register{nullptr};
std::atomic<bool> g_gpuperf_has_buffers{false};

// Whether `function` is code of gpuperf's injection library (the buffer callbacks it
// registers live there).
bool InGpuperf(const void* function) {
  Dl_info info{};
  if (function == nullptr || dladdr(function, &info) == 0 || info.dli_fname == nullptr) {
    return false;
  }
  return std::strncmp(FileName(info.dli_fname), "libgpuperf_inject", 17) == 0;
}

}  // namespace

extern "C" {

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                    void* userdata) {
  SubscribeFn real =
      Resolve(g_subscribe, "cuptiSubscribe", reinterpret_cast<const void*>(&cuptiSubscribe));
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  const CUptiResult result = real(subscriber, callback, userdata);
  NoteResult(result, false);
  return result;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                    CUpti_BuffersCallbackCompleteFunc completed) {
  RegisterFn real = Resolve(g_register, "cuptiActivityRegisterCallbacks",
                            reinterpret_cast<const void*>(&cuptiActivityRegisterCallbacks));
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  const CUptiResult result = real(requested, completed);
  if (result != CUPTI_SUCCESS) return result;
  if (InGpuperf(reinterpret_cast<const void*>(requested))) {
    g_gpuperf_has_buffers.store(true, std::memory_order_release);
  } else if (g_gpuperf_has_buffers.exchange(false, std::memory_order_acq_rel)) {
    gpuperf_preload_buffer_takeovers.fetch_add(1, std::memory_order_relaxed);
  }
  return result;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber,
                                       CUpti_CallbackFunc callback, void* userdata,
                                       CUpti_SubscriberParams* params) {
  SubscribeV2Fn real = Resolve(g_subscribe_v2, "cuptiSubscribe_v2",
                               reinterpret_cast<const void*>(&cuptiSubscribe_v2));
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  const CUptiResult result = real(subscriber, callback, userdata, params);
  NoteResult(result, IsGpuperf(params));
  return result;
}

}  // extern "C"
