#include "inject/cupti/callbacks.h"

#include <cupti.h>

#include <cstring>
#include <string_view>
#include <vector>

#include "inject/cupti/activity.h"
#include "inject/cupti/cupti_call.h"
#include "inject/link_buffers.h"
#include "inject/recorder.h"
#include "inject/stack_capture.h"

namespace gpuperf::inject {
namespace {

// Per callback id: the API's StringId when we take stacks for it, else 0. Filled once at
// init, read lock-free by app threads.
std::vector<StringId> g_runtime_names;
std::vector<StringId> g_driver_names;
CUpti_SubscriberHandle g_subscriber = nullptr;

struct ThreadState {
  uint32_t depth = 0;       // nesting of traced API calls on this thread
  StackId outer_stack = 0;  // the outermost call's stack...
  StringId outer_api = 0;   // ...and name, shared by the calls nested in it
  uint32_t sample = 0;      // for sampled self-timing
};
thread_local ThreadState t_state;

bool WantsStack(std::string_view name, bool runtime) {
  static constexpr std::string_view kRuntime[] = {"cudaLaunch", "__cudaLaunch", "cudaGraphLaunch",
                                                  "cudaMemcpy", "cudaMemset",   "cudaMalloc"};
  static constexpr std::string_view kDriver[] = {"cuLaunch", "cuGraphLaunch", "cuMemcpy",
                                                 "cuMemset", "cuMemAlloc"};
  if (runtime) {
    for (auto prefix : kRuntime) {
      if (name.starts_with(prefix)) return true;
    }
  } else {
    for (auto prefix : kDriver) {
      if (name.starts_with(prefix)) return true;
    }
  }
  return false;
}

void OnApi(Recorder& recorder, const std::vector<StringId>& names, CUpti_CallbackId cbid,
           const CUpti_CallbackData* data) {
  if (cbid >= names.size() || names[cbid] == 0) return;
  ThreadState& state = t_state;
  if (data->callbackSite == CUPTI_API_EXIT) {
    if (state.depth > 0) --state.depth;
    return;
  }
  const bool timed = (++state.sample & 15) == 0;
  const uint64_t begin = timed ? MonotonicNs() : 0;
  if (state.depth++ == 0) {
    state.outer_api = names[cbid];
    state.outer_stack = 0;
    if (recorder.config.stacks && recorder.capturing.load(std::memory_order_relaxed)) {
      state.outer_stack = CaptureLaunchStack();
      CountStat(StatId::stacks_unwound);
    }
  }
  if (!recorder.capturing.load(std::memory_order_relaxed)) return;
  ThreadLinks& links = CurrentThreadLinks();
  AppendLink(links,
             LaunchLinkRecord{recorder.pid, links.tid, data->correlationId, state.outer_stack,
                              state.outer_api, timed ? begin : MonotonicNs()});
  gpuperf_launch_marker(data->correlationId);
  CountStat(StatId::callbacks);
  if (timed) CountStat(StatId::callback_ns, (MonotonicNs() - begin) * 16);
}

void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* cbdata) {
  auto* recorder = static_cast<Recorder*>(userdata);
  if (recorder == nullptr || recorder->disabled.load(std::memory_order_relaxed)) return;
  try {
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
      const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
      if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
          data->callbackSite == CUPTI_API_ENTER) {
        FlushActivities(false);  // the reset discards what CUPTI still buffers
        return;
      }
      OnApi(*recorder, g_runtime_names, cbid, data);
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      OnApi(*recorder, g_driver_names, cbid, static_cast<const CUpti_CallbackData*>(cbdata));
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE &&
               cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      FlushActivities(false);
    }
  } catch (...) {
    // Never let an exception reach CUDA's frames.
  }
}

void EnableDomain(Recorder& recorder, CUpti_CallbackDomain domain, uint32_t size,
                  std::vector<StringId>& names) {
  names.assign(size, 0);
  auto lock = recorder.names.Lock();
  for (uint32_t cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    const std::string clean = CleanApiName(name);
    if (!WantsStack(clean, domain == CUPTI_CB_DOMAIN_RUNTIME_API)) continue;
    names[cbid] = recorder.names.InternLocked(std::string_view(clean));
    cuptiEnableCallback(1, g_subscriber, domain, cbid);
  }
}

}  // namespace

extern "C" __attribute__((noinline, visibility("default"))) void gpuperf_launch_marker(
    unsigned correlation_id) {
  // Empty on purpose; the asm keeps the compiler from removing the call.
  asm volatile("" : : "r"(correlation_id) : "memory");
}

bool EnableCallbacks(Recorder& recorder) {
  CUpti_SubscriberParams params;
  std::memset(&params, 0, sizeof(params));
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "gpuperf";
  char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  params.oldSubscriberName = old_name;
  params.oldSubscriberSize = sizeof(old_name);
  CUptiResult result = cuptiSubscribe_v2(&g_subscriber, OnCallback, &recorder, &params);
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    CountStat(StatId::cupti_subscribe_failed);
    LogOnce("CUPTI is already in use by %s: recording GPU activity without launch stacks",
            old_name[0] ? old_name : "another profiler");
    return false;
  }
  if (result != CUPTI_SUCCESS) {
    CountStat(StatId::cupti_subscribe_failed);
    LogOnce("cuptiSubscribe failed: %s; recording without launch stacks", CuptiErrorText(result));
    return false;
  }
  EnableDomain(recorder, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
               g_runtime_names);
  EnableDomain(recorder, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE, g_driver_names);
  GP_CUPTI_CALL(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                                    CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020));
  GP_CUPTI_CALL(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
  return true;
}

}  // namespace gpuperf::inject
