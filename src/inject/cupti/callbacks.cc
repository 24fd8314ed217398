#include "inject/cupti/callbacks.h"
#include "inject/cupti/window_edge.h"

#include <cupti.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include "gpuperf/stack_marker.h"
#include "inject/cupti/activity.h"
#include "inject/cupti/callback_gate.h"
#include "inject/cupti/cupti_call.h"
#include "inject/cupti/detach.h"
#include "inject/cupti/host_waits.h"
#include "inject/cupti/translate.h"
#include "inject/launch_sampler.h"
#include "inject/power/power_sampler.h"
#include "inject/recorder.h"
#include "inject/stack/stack_capture.h"
#include "inject/thread_buffers.h"
#include "inject/torch/autograd_link.h"

namespace gpuperf::inject {
namespace {

// What we do at one callback id. Filled once at init, read lock-free by app threads.
struct CallbackIdPlan {
  StringId name = 0;
  bool linked = false;             // a launch, copy, set or allocation: stack + launch link
  bool traced = false;             // an API record when it is the thread's outermost call
  bool wait_record = false;        // a sync record when outermost (host_waits.h), a wait or not
  bool per_thread_stream = false;  // a _ptsz call
  // A synchronization call's kind; IsHostWait(wait_kind): the CPU waits in it, so it is
  // linked and never left to the sampler.
  SyncKind wait_kind = SyncKind::kUnknown;
};

std::atomic<CallbackObserver> g_observer{nullptr};
std::vector<CallbackIdPlan> g_runtime_plan;
LaunchSampler g_sampler;          // --sample-launches
StackId g_not_sampled_stack = 0;  // the stack its unsampled launches link to
std::vector<CallbackIdPlan> g_driver_plan;
CUpti_SubscriberHandle g_subscriber = nullptr;
char g_other_subscriber[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};  // OtherSubscriberName

// Bumped whenever callbacks are switched on or off: a call that was running then may never
// report its exit, so a thread that sees a new epoch forgets its nesting.
std::atomic<uint32_t> g_epoch{0};
// The API callbacks stay switched on but do nothing (QuietApiCallbacks): switching them off
// by id before a cuptiFinalize crashes a PyTorch process under CUPTI 13.0 (callbacks.h).
std::atomic<bool> g_api_quiet{false};
// Whether the planned ids were ever switched on: quieting needs no CUPTI call before that.
bool g_api_ids_on = false;
std::atomic<bool> g_bench_stacks_paused{false};   // PauseStacksForBench
std::atomic<bool> g_bench_callbacks_idle{false};  // IdleCallbacksForBench

// How deep the correlation ids of a thread's nested calls are kept (OnExit).
constexpr uint32_t kTrackedDepth = 8;

struct ThreadState {
  uint32_t epoch = 0;
  uint32_t depth = 0;  // nesting of enabled API calls on this thread
  // The correlation id each nesting level entered with: an exit with another id belongs to
  // a call whose enter was not seen (callbacks switched on one id at a time while it ran).
  uint32_t enter_ids[kTrackedDepth] = {};
  StackId outer_stack = 0;  // the outermost call's stack...
  StringId outer_api = 0;   // ...and name, shared by the calls nested in it
  uint64_t outer_start = 0;
  bool outer_traced = false;
  HostWait outer_wait;           // kind kUnknown: no sync record
  uint32_t linked_id = 0;        // the correlation id that has its launch link already
  uint32_t sample = 0;           // for sampled self-timing
  LaunchSampler::Bucket stacks;  // --sample-launches
};
thread_local ThreadState t_state;

bool StartsWithAny(std::string_view name, std::span<const std::string_view> prefixes) {
  for (std::string_view prefix : prefixes) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

bool IsLinked(std::string_view name, bool runtime) {
  static constexpr std::string_view kRuntime[] = {"cudaLaunch", "__cudaLaunch", "cudaGraphLaunch",
                                                  "cudaMemcpy", "cudaMemset",   "cudaMalloc"};
  static constexpr std::string_view kDriver[] = {"cuLaunch", "cuGraphLaunch", "cuMemcpy",
                                                 "cuMemset", "cuMemAlloc"};
  return runtime ? StartsWithAny(name, kRuntime) : StartsWithAny(name, kDriver);
}

// "cuStreamGetCaptureInfo_v2_ptsz" -> "cuStreamGetCaptureInfo".
std::string_view BaseName(std::string_view name) {
  for (std::string_view previous; previous != name;) {
    previous = name;
    if (name.ends_with("_ptsz") || name.ends_with("_ptds")) name.remove_suffix(5);
    name = StripVersionSuffix(name);
  }
  return name;
}

// Getters that libraries call thousands of times per second (PyTorch asks for the current
// device before nearly every operation). They take no measurable time and carry no work, so
// they are not traced: each would cost a callback and a record. Kineto skips the same kind.
bool IsChatter(std::string_view name) {
  static constexpr std::string_view kChatter[] = {"cudaGetDevice",
                                                  "cudaGetDeviceCount",
                                                  "cudaGetLastError",
                                                  "cudaPeekAtLastError",
                                                  "cudaDeviceGetAttribute",
                                                  "cudaPointerGetAttributes",
                                                  "cudaStreamIsCapturing",
                                                  "cudaStreamGetCaptureInfo",
                                                  "cudaFuncGetAttributes",
                                                  "cudaGetDriverEntryPoint",
                                                  "cudaGetDriverEntryPointByVersion",
                                                  "cudaRuntimeGetVersion",
                                                  "cudaDriverGetVersion",
                                                  "cudaThreadExchangeStreamCaptureMode",
                                                  "cudaGetErrorString",
                                                  "cudaGetErrorName",
                                                  "cudaGetExportTable",
                                                  "cuCtxGetCurrent",
                                                  "cuCtxSetCurrent",
                                                  "cuCtxGetDevice",
                                                  "cuCtxPushCurrent",
                                                  "cuCtxPopCurrent",
                                                  "cuCtxGetApiVersion",
                                                  "cuCtxGetFlags",
                                                  "cuCtxGetId",
                                                  "cuCtxGetStreamPriorityRange",
                                                  "cuDevicePrimaryCtxGetState",
                                                  "cuDeviceGet",
                                                  "cuDeviceGetCount",
                                                  "cuDeviceGetAttribute",
                                                  "cuDeviceGetUuid",
                                                  "cuKernelGetAttribute",
                                                  "cuFuncGetAttribute",
                                                  "cuPointerGetAttribute",
                                                  "cuPointerGetAttributes",
                                                  "cuGetProcAddress",
                                                  "cuGetExportTable",
                                                  "cuStreamIsCapturing",
                                                  "cuStreamGetCaptureInfo",
                                                  "cuStreamGetCtx",
                                                  "cuStreamGetId",
                                                  "cuGetErrorString",
                                                  "cuGetErrorName",
                                                  "cuDriverGetVersion",
                                                  "cuThreadExchangeStreamCaptureMode"};
  const std::string_view base = BaseName(name);
  for (std::string_view chatter : kChatter) {
    if (base == chatter) return true;
  }
  return false;
}

int32_t ReturnCode(const CUpti_CallbackData* data) {
  // cudaError_t and CUresult are both int-sized enums.
  return data->functionReturnValue != nullptr
             ? *static_cast<const int32_t*>(data->functionReturnValue)
             : 0;
}

void OnExit(Recorder& recorder, ApiDomain domain, CUpti_CallbackId cbid,
            const CUpti_CallbackData* data) {
  ThreadState& state = t_state;
  if (state.depth == 0 || state.epoch != g_epoch.load(std::memory_order_relaxed)) {
    // Enabled while this call was running: an attach window leaves out its GPU work, unless
    // a call nested in it (the same id) took the launch's stack.
    if (data->correlationId != state.linked_id) NoteCallBeforeWindow(data->correlationId);
    return;
  }
  if (const uint32_t level = state.depth - 1;
      level < kTrackedDepth && state.enter_ids[level] != data->correlationId) {
    // A nested call whose enter came before its id was switched on: not one of ours.
    if (data->correlationId != state.linked_id) NoteCallBeforeWindow(data->correlationId);
    return;
  }
  if (--state.depth != 0) return;
  const int32_t code = ReturnCode(data);
  const bool waited = state.outer_wait.kind != SyncKind::kUnknown;
  if ((state.outer_traced || waited) && recorder.capturing.load(std::memory_order_relaxed)) {
    ThreadBuffers& buffers = CurrentThreadBuffers();
    const uint64_t end = MonotonicNs();
    if (state.outer_traced) {
      AppendApiCall(buffers, ApiRecord{recorder.pid, buffers.tid, domain, cbid, state.outer_api,
                                       state.outer_start, end, data->correlationId, code});
      CountThreadStat(buffers, kApiCalls);
    }
    if (waited)
      RecordHostWait(recorder, state.outer_wait, buffers.tid, state.outer_start, end, data);
  }
  // After the call's record: a flight-recorder dump it asks for holds the failing call.
  if (code != 0) recorder.writer.NoteCudaError(state.outer_api, code);
}

void OnEnter(Recorder& recorder, const CallbackIdPlan& plan, const CUpti_CallbackData* data) {
  ThreadState& state = t_state;
  const uint32_t epoch = g_epoch.load(std::memory_order_relaxed);
  if (state.epoch != epoch) {
    state.epoch = epoch;
    state.depth = 0;
  }
  if (state.depth < kTrackedDepth) state.enter_ids[state.depth] = data->correlationId;
  const bool outermost = state.depth++ == 0;
  const bool capturing = recorder.capturing.load(std::memory_order_relaxed);
  if (outermost) {
    state.outer_api = plan.name;
    state.outer_stack = 0;
    state.outer_traced = plan.traced;
    state.outer_wait = plan.wait_record
                           ? HostWaitAtEntry(plan.wait_kind, plan.per_thread_stream, data)
                           : HostWait{};
    state.outer_start = MonotonicNs();
    state.linked_id = 0;
  }
  // CUDA gives a runtime call and the driver call it makes the same correlation id: one
  // link serves both.
  if (!plan.linked || !capturing || state.linked_id == data->correlationId) return;
  state.linked_id = data->correlationId;
  const bool timed = (++state.sample & 15) == 0;
  const uint64_t begin = timed ? MonotonicNs() : 0;
  // A launch nested in an untraced call (rare) takes the stack when it first needs one.
  ThreadBuffers& buffers = CurrentThreadBuffers();
  if (state.outer_stack == 0 && recorder.config.stacks &&
      !g_bench_stacks_paused.load(std::memory_order_relaxed)) {
    if (g_sampler.enabled() && !IsHostWait(plan.wait_kind) &&
        !g_sampler.Take(state.stacks, state.outer_start)) {
      state.outer_stack = g_not_sampled_stack;
      CountThreadStat(buffers, kLaunchesUnsampled);
    } else {
      StackSource source = StackSource::kNone;
      bool memo_hit = false;
      const AutogradLaunch autograd = CurrentAutogradLaunch();
      StackId forward = 0;
      if (autograd.role == AutogradLaunch::Role::kBackward) {
        forward = ForwardStackOf(autograd.node);
        CountStat(forward != 0 ? StatId::autograd_backward_linked
                               : StatId::autograd_backward_unlinked);
      }
      state.outer_stack = CaptureLaunchStack(&source, &memo_hit, forward);
      if (autograd.role == AutogradLaunch::Role::kForward) {
        NoteForwardStack(autograd.node, state.outer_stack);
      }
      CountThreadStat(buffers, kStacksUnwound);
      if (source == StackSource::kTable) CountThreadStat(buffers, kTableStacks);
      if (memo_hit) CountThreadStat(buffers, kMemoStacks);
    }
  }
  AppendLink(buffers, LaunchLinkRecord{recorder.pid, buffers.tid, data->correlationId,
                                       state.outer_stack, state.outer_api, state.outer_start});
  gpuperf_launch_marker(data->correlationId);
  CountThreadStat(buffers, kCallbacks);
  if (timed) CountThreadStat(buffers, kCallbackNs, (MonotonicNs() - begin) * 16);
}

void OnApi(Recorder& recorder, const std::vector<CallbackIdPlan>& plans, ApiDomain domain,
           CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  if (cbid >= plans.size() || g_api_quiet.load(std::memory_order_relaxed)) return;
  const CallbackIdPlan& plan = plans[cbid];
  if (!plan.linked && !plan.traced && !plan.wait_record) return;
  if (data->callbackSite == CUPTI_API_EXIT) {
    OnExit(recorder, domain, cbid, data);
  } else {
    OnEnter(recorder, plan, data);
  }
}

void CUPTIAPI OnCallback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* cbdata) {
  auto* recorder = static_cast<Recorder*>(userdata);
  const EnteredCallback entered;
  if (FinalizeRequested()) {
    // Detaching (detach.h): nothing is recorded any more; an API exit finalizes CUPTI.
    FinalizeAtApiExit(domain, cbdata, recorder != nullptr && recorder->writer.InCuptiFlush());
    return;
  }
  if (!entered.open() || recorder == nullptr ||
      recorder->disabled.load(std::memory_order_relaxed) ||
      g_bench_callbacks_idle.load(std::memory_order_relaxed)) {
    return;
  }
  try {
    if (CallbackObserver observer = g_observer.load(std::memory_order_acquire)) {
      observer(domain, cbid, cbdata);
    }
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
      const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
      if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020 &&
          data->callbackSite == CUPTI_API_ENTER) {
        FlushActivities(false);  // the reset discards what CUPTI still buffers
      }
      OnApi(*recorder, g_runtime_plan, ApiDomain::kRuntime, cbid, data);
    } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      OnApi(*recorder, g_driver_plan, ApiDomain::kDriver, cbid,
            static_cast<const CUpti_CallbackData*>(cbdata));
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CU_INIT_FINISHED) {
      // CUPTI takes the Hardware Event System only from here to the first context: inside
      // cuInit, where the injection library initializes, the driver is not ready for it.
      if (recorder->config.hw_trace) UseHardwareKernelTimes();
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE &&
               cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      FlushActivities(false);
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
      // A GPU in use: its power is sampled from now on (power_sampler.h).
      uint32_t device = 0;
      const auto* data = static_cast<const CUpti_ResourceData*>(cbdata);
      if (cuptiGetDeviceId(data->context, &device) == CUPTI_SUCCESS) NotePowerDevice(device);
    }
  } catch (...) {
    // Never let an exception reach CUDA's frames.
  }
}

// Decides, for every callback id of a domain, whether we take its stack and/or trace it.
void PlanDomain(Recorder& recorder, CUpti_CallbackDomain domain, uint32_t size, bool trace_all,
                std::vector<CallbackIdPlan>& plans) {
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  // Sync records come from these callbacks, not CUPTI's kind, wherever API records do
  // (host_waits.h; EnableActivities leaves the kind off then).
  const bool syncs_from_callbacks =
      recorder.config.api_from_callbacks && (recorder.config.activities & kActSync) != 0;
  plans.assign(size, CallbackIdPlan{});
  auto lock = recorder.names.Lock();
  for (uint32_t cbid = 1; cbid < size; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
    const std::string clean = CleanApiName(name);
    CallbackIdPlan& plan = plans[cbid];
    plan.wait_kind = SyncKindOfCall(BaseName(clean), runtime);
    plan.wait_record = plan.wait_kind != SyncKind::kUnknown && syncs_from_callbacks;
    plan.per_thread_stream = clean.ends_with("_ptsz");
    plan.linked =
        recorder.config.stacks && (IsLinked(clean, runtime) || IsHostWait(plan.wait_kind));
    plan.traced = trace_all && !IsChatter(clean);
    if (plan.linked || plan.traced) plan.name = ActivityTranslator().ApiName(domain, cbid);
  }
}

// Switches the planned callback ids on or off. cudaDeviceReset stays on for its flush.
void EnablePlanned(uint32_t enable, CUpti_CallbackDomain domain,
                   const std::vector<CallbackIdPlan>& plans) {
  for (uint32_t cbid = 1; cbid < plans.size(); ++cbid) {
    if (plans[cbid].linked || plans[cbid].traced || plans[cbid].wait_record) {
      cuptiEnableCallback(enable, g_subscriber, domain, cbid);
    }
  }
}

}  // namespace

extern "C" __attribute__((noinline, visibility("default"))) void gpuperf_launch_marker(
    unsigned correlation_id) {
  // Empty on purpose; the asm keeps the compiler from removing the call.
  asm volatile("" : : "r"(correlation_id) : "memory");
}

bool EnableCallbacks(Recorder& recorder) {
  OpenCallbackGate();
  CUpti_SubscriberParams params;
  std::memset(&params, 0, sizeof(params));
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "gpuperf";
  char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
  params.oldSubscriberName = old_name;
  params.oldSubscriberSize = sizeof(old_name);
  CUptiResult result = cuptiSubscribe_v2(&g_subscriber, OnCallback, &recorder, &params);
  g_other_subscriber[0] = '\0';
  if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    std::snprintf(g_other_subscriber, sizeof(g_other_subscriber), "%s",
                  old_name[0] ? old_name : "another profiler");
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
  if (recorder.config.stacks && recorder.config.sample_launches_per_s != 0) {
    g_not_sampled_stack = InternMarkerStack(kLaunchNotSampledWord);
    if (g_not_sampled_stack != 0) g_sampler.Configure(recorder.config.sample_launches_per_s);
  }
  const uint32_t activities = recorder.config.activities;
  const bool api = recorder.config.api_from_callbacks;
  PlanDomain(recorder, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE,
             api && (activities & kActRuntime), g_runtime_plan);
  PlanDomain(recorder, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
             api && (activities & kActDriver), g_driver_plan);
  // With --delay the ids come on at the capture range's start; until then nothing is
  // switched on or off.
  if (recorder.config.delay_ms == 0) {
    SetApiCallbacks(true);
  } else {
    QuietApiCallbacks();
  }
  EnableResourceCallbacks();
  return true;
}

const char* OtherSubscriberName() {
  return g_other_subscriber;
}

void EnableResourceCallbacks() {
  if (g_subscriber == nullptr) return;
  GP_CUPTI_CALL(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
  GP_CUPTI_CALL(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
  GP_CUPTI_CALL(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                    CUPTI_CBID_RESOURCE_CU_INIT_FINISHED));
}

void SetCallbackObserver(CallbackObserver observer) {
  g_observer.store(observer, std::memory_order_release);
}

bool EnableExtraCallback(int domain, uint32_t cbid) {
  if (g_subscriber == nullptr) return false;
  return GP_CUPTI_CALL(cuptiEnableCallback(
             1, g_subscriber, static_cast<CUpti_CallbackDomain>(domain), cbid)) == CUPTI_SUCCESS;
}

void PauseStacksForBench(bool paused) {
  g_bench_stacks_paused.store(paused, std::memory_order_relaxed);
}

void IdleCallbacksForBench(bool idle) {
  g_bench_callbacks_idle.store(idle, std::memory_order_relaxed);
}

void DisableDriverCallbacksForBench() {
  if (g_subscriber == nullptr) return;
  g_epoch.fetch_add(1, std::memory_order_relaxed);
  EnablePlanned(0, CUPTI_CB_DOMAIN_DRIVER_API, g_driver_plan);
}

void UnsubscribeCallbacks() {
  if (g_subscriber == nullptr) return;
  GP_CUPTI_CALL(cuptiUnsubscribe(g_subscriber));
  g_subscriber = nullptr;
  g_api_ids_on = false;
}

bool CallbacksSubscribed() {
  return g_subscriber != nullptr;
}

void ForgetSubscriber() {
  g_subscriber = nullptr;
  g_api_ids_on = false;
}

void SetApiDomainsForFinalize() {
  if (g_subscriber == nullptr) return;
  GP_CUPTI_CALL(cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API));
  GP_CUPTI_CALL(cuptiEnableDomain(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API));
}

bool SubscribeIdle(Recorder& recorder) {
  UnsubscribeCallbacks();
  OpenCallbackGate();
  return GP_CUPTI_CALL(cuptiSubscribe(&g_subscriber, OnCallback, &recorder)) == CUPTI_SUCCESS;
}

void DisableAllCallbacksForBench() {
  if (g_subscriber != nullptr) GP_CUPTI_CALL(cuptiEnableAllDomains(0, g_subscriber));
}

void QuietApiCallbacks() {
  g_epoch.fetch_add(1, std::memory_order_relaxed);
  g_api_quiet.store(true, std::memory_order_relaxed);
}

void SetApiCallbacks(bool enable) {
  if (g_subscriber == nullptr) return;
  g_epoch.fetch_add(1, std::memory_order_relaxed);
  g_api_quiet.store(!enable, std::memory_order_relaxed);
  if (!enable && !g_api_ids_on) return;  // nothing to switch off
  g_api_ids_on = enable;
  EnablePlanned(enable ? 1 : 0, CUPTI_CB_DOMAIN_RUNTIME_API, g_runtime_plan);
  EnablePlanned(enable ? 1 : 0, CUPTI_CB_DOMAIN_DRIVER_API, g_driver_plan);
  // cudaDeviceReset stays on in any case: it flushes what CUPTI would otherwise discard.
  cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                      CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
}

}  // namespace gpuperf::inject
