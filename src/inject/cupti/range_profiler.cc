#include "inject/cupti/range_profiler.h"

#include <cupti.h>
#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/metric_sets.h"
#include "inject/cupti/callbacks.h"
#include "inject/cupti/cupti_call.h"
#include "inject/cupti/range_session.h"
#include "inject/recorder.h"
#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

Recorder* g_recorder = nullptr;
bool g_user_ranges = false;
std::regex g_kernel_regex;
bool g_filter_kernels = false;

// Sessions live until the process ends (a context's callbacks may still be running when it
// is destroyed): a destroyed context's session is only disabled.
std::mutex g_sessions_mutex;
std::map<CUcontext, std::unique_ptr<RangeSession>> g_sessions;
CUcontext g_only_context = nullptr;  // set while the process has exactly one context
size_t g_contexts = 0;

// Launch nesting on this thread (a runtime launch calls a driver launch), and the session
// locked from a measured launch's enter to its exit.
thread_local uint32_t t_launch_depth = 0;
thread_local RangeSession* t_locked = nullptr;
thread_local size_t t_range_index = 0;
thread_local CUcontext t_context = nullptr;  // the last context this thread used

// A hung lock would hang the application: past this, a launch is left unmeasured.
constexpr auto kLockWait = std::chrono::seconds(10);

uint32_t ThreadId() {
  return static_cast<uint32_t>(syscall(SYS_gettid));
}

// The session of `context`, set up on first use; nullptr when counters are unusable there.
RangeSession* SessionFor(CUcontext context) {
  if (context == nullptr) return nullptr;
  RangeSession* session = nullptr;
  bool created = false;
  {
    std::lock_guard<std::mutex> lock(g_sessions_mutex);
    std::unique_ptr<RangeSession>& slot = g_sessions[context];
    if (slot == nullptr) {
      slot = std::make_unique<RangeSession>(context, RangeSessionOptions{g_user_ranges, 64});
      created = true;
    }
    session = slot.get();
  }
  if (created) {
    std::lock_guard<std::timed_mutex> lock(session->mutex());
    const uint64_t begin = MonotonicNs();
    session->Setup(*g_recorder, g_recorder->config.metric_set);
    CountStat(StatId::profiler_ns, MonotonicNs() - begin);
  }
  return session->usable() ? session : nullptr;
}

bool KernelWanted(const char* name) {
  if (name == nullptr) return false;  // graph launches: their kernels are not measured
  if (!g_filter_kernels) return true;
  thread_local std::unordered_map<const char*, bool> cache;
  auto [it, inserted] = cache.try_emplace(name, false);
  if (inserted) it->second = std::regex_search(name, g_kernel_regex);
  return it->second;
}

void Timed(RangeSession& session, void (*work)(RangeSession&)) {
  const uint64_t begin = MonotonicNs();
  work(session);
  CountStat(StatId::profiler_ns, MonotonicNs() - begin);
}

void FlushSession(RangeSession& session) {
  Timed(session, [](RangeSession& s) { s.Flush(*g_recorder); });
}

// ---- per kernel ----

void KernelLaunchEnter(const CUpti_CallbackData* data) {
  RangeSession* session = SessionFor(data->context);
  if (session == nullptr) return;
  if (!session->mutex().try_lock_for(kLockWait)) {
    CountStat(StatId::metric_names_unmatched);
    return;
  }
  if (!KernelWanted(data->symbolName)) {
    // Stopped before it runs, so that it is not measured.
    if (session->started()) FlushSession(*session);
    session->mutex().unlock();
    return;
  }
  // A launch from another thread: the profiler is started again on that thread, as it must run
  // on the thread that launches (Kineto's range profiler found so); each run of ranges then
  // belongs to one thread.
  const uint32_t tid = ThreadId();
  if (session->full() || (session->started() && session->start_tid != tid)) {
    FlushSession(*session);
  }
  if (!session->Start()) {
    session->mutex().unlock();
    return;
  }
  session->start_tid = tid;
  PendingRange range;
  range.kind = MetricRangeKind::kKernel;
  range.name = g_recorder->names.Intern(data->symbolName);
  range.correlation_id = data->correlationId;
  range.start_ns = MonotonicNs();
  session->ranges().push_back(range);
  // Held until the launch returns: CUPTI replays the kernel inside the launch, and the next
  // launch of the context must come after it in our list as in CUPTI's.
  t_locked = session;
  t_range_index = session->ranges().size() - 1;
}

void KernelLaunchExit() {
  if (t_locked == nullptr) return;
  if (t_range_index < t_locked->ranges().size()) {
    t_locked->ranges()[t_range_index].end_ns = MonotonicNs();
  }
  t_locked->mutex().unlock();
  t_locked = nullptr;
}

// ---- per range: NVTX ranges and time windows ----

CUcontext CurrentContext() {
  if (t_context != nullptr) return t_context;
  std::lock_guard<std::mutex> lock(g_sessions_mutex);
  return g_only_context;
}

void OpenRange(RangeSession& session, MetricRangeKind kind, const std::string& name) {
  if (session.full()) FlushSession(session);
  if (!session.Start() || !session.PushRange(name)) return;
  PendingRange range;
  range.kind = kind;
  range.name = g_recorder->names.Intern(name);
  range.cupti_name = name;
  range.start_ns = MonotonicNs();
  session.ranges().push_back(range);
}

void CloseRange(RangeSession& session) {
  if (!session.PopRange() || session.ranges().empty()) return;
  session.ranges().back().end_ns = MonotonicNs();
}

std::string NvtxName(uint32_t cbid, const CUpti_NvtxData* data) {
  const nvtxEventAttributes_t* attributes = nullptr;
  if (cbid == CUPTI_CBID_NVTX_nvtxRangePushA) {
    const auto* params = static_cast<const nvtxRangePushA_params*>(data->functionParams);
    return params && params->message ? params->message : "[unnamed range]";
  }
  if (cbid == CUPTI_CBID_NVTX_nvtxRangePushEx) {
    attributes = static_cast<const nvtxRangePushEx_params*>(data->functionParams)->eventAttrib;
  } else {
    attributes =
        static_cast<const nvtxDomainRangePushEx_params*>(data->functionParams)->core.eventAttrib;
  }
  if (attributes != nullptr && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII &&
      attributes->message.ascii != nullptr) {
    return attributes->message.ascii;
  }
  return "[unnamed range]";
}

void NvtxCallback(uint32_t cbid, const CUpti_NvtxData* data) {
  const bool push = cbid == CUPTI_CBID_NVTX_nvtxRangePushA ||
                    cbid == CUPTI_CBID_NVTX_nvtxRangePushEx ||
                    cbid == CUPTI_CBID_NVTX_nvtxDomainRangePushEx;
  const bool pop =
      cbid == CUPTI_CBID_NVTX_nvtxRangePop || cbid == CUPTI_CBID_NVTX_nvtxDomainRangePop;
  if (!push && !pop) return;
  RangeSession* session = SessionFor(CurrentContext());
  if (session == nullptr || !session->mutex().try_lock_for(kLockWait)) return;
  const uint32_t tid = ThreadId();
  if (session->owner_tid != 0 && session->owner_tid != tid) {
    // Another thread's range is open on this context: CUPTI keeps one range stack per context.
    LogOnce(
        "hardware metrics: NVTX ranges of several threads overlap on one context; only one "
        "thread's are measured at a time");
  } else if (push) {
    session->owner_tid = tid;
    if (session->depth++ == 0) OpenRange(*session, MetricRangeKind::kNvtx, NvtxName(cbid, data));
  } else if (session->depth > 0 && --session->depth == 0) {
    CloseRange(*session);
    session->owner_tid = 0;
  }
  session->mutex().unlock();
}

void WindowTick(const CUpti_CallbackData* data) {
  RangeSession* session = SessionFor(data->context);
  if (session == nullptr || !session->mutex().try_lock_for(kLockWait)) return;
  const uint64_t now = MonotonicNs();
  const uint64_t window_ns = uint64_t{g_recorder->config.metric_window_ms} * 1000000ull;
  if (session->window_start_ns != 0 && now - session->window_start_ns >= window_ns) {
    CloseRange(*session);
    session->window_start_ns = 0;
  }
  if (session->window_start_ns == 0) {
    OpenRange(*session, MetricRangeKind::kWindow,
              "window " + std::to_string(session->window_index++));
    session->window_start_ns = now;
  }
  session->mutex().unlock();
}

// ---- callbacks ----

bool IsLaunch(std::string_view name) {
  return name.starts_with("cudaLaunch") || name.starts_with("__cudaLaunch") ||
         name.starts_with("cuLaunch") || name.starts_with("cudaGraphLaunch") ||
         name.starts_with("cuGraphLaunch");
}

std::vector<bool>& LaunchIds(CUpti_CallbackDomain domain) {
  static std::vector<bool> runtime, driver;
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime : driver;
}

// Notes, and enables, every launch callback id of both API domains.
void EnableLaunchCallbacks() {
  for (CUpti_CallbackDomain domain : {CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API}) {
    const uint32_t size = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                              ? static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE)
                              : static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE);
    std::vector<bool>& ids = LaunchIds(domain);
    ids.assign(size, false);
    for (uint32_t cbid = 1; cbid < size; ++cbid) {
      const char* name = nullptr;
      ids[cbid] =
          cuptiGetCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name && IsLaunch(name);
      if (ids[cbid]) EnableExtraCallback(domain, cbid);
    }
  }
}

void ApiCallback(CUpti_CallbackDomain domain, uint32_t cbid, const CUpti_CallbackData* data) {
  if (data->context != nullptr) t_context = data->context;
  const std::vector<bool>& ids = LaunchIds(domain);
  if (cbid >= ids.size() || !ids[cbid]) return;
  if (data->callbackSite == CUPTI_API_ENTER) {
    if (t_launch_depth++ != 0) return;  // the driver launch inside a runtime launch
    if (g_recorder->config.metric_ranges == MetricRanges::kWindows) {
      WindowTick(data);
    } else if (!g_user_ranges) {
      KernelLaunchEnter(data);
    }
  } else if (t_launch_depth > 0 && --t_launch_depth == 0) {
    KernelLaunchExit();
  }
}

void ContextEvent(uint32_t cbid, const CUpti_ResourceData* data) {
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    std::lock_guard<std::mutex> lock(g_sessions_mutex);
    g_only_context = ++g_contexts == 1 ? data->context : nullptr;
    return;
  }
  if (cbid != CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) return;
  RangeSession* session = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_sessions_mutex);
    if (g_only_context == data->context) g_only_context = nullptr;
    auto it = g_sessions.find(data->context);
    if (it != g_sessions.end()) session = it->second.get();
  }
  if (session == nullptr || !session->mutex().try_lock_for(kLockWait)) return;
  FlushSession(*session);
  session->Disable();
  session->mutex().unlock();
}

}  // namespace

bool StartRangeProfiler(Recorder& recorder) {
  const Config& config = recorder.config;
  if (MetricSet(config.metric_set, SetScope::kPerKernel).empty()) {
    LogOnce("unknown metric set '%s' (sets: %s): no hardware metrics", config.metric_set.c_str(),
            MetricSetNames().c_str());
    return false;
  }
  if (!recorder.subscribed) {
    LogOnce(
        "hardware metrics need gpuperf's CUPTI callbacks, which another tool holds: none "
        "are measured");
    CountStat(StatId::hardware_unavailable);
    return false;
  }
  try {
    g_filter_kernels = !config.metric_kernel_regex.empty();
    if (g_filter_kernels) g_kernel_regex = std::regex(config.metric_kernel_regex);
  } catch (const std::regex_error&) {
    LogOnce("bad kernel regex '%s': measuring every kernel", config.metric_kernel_regex.c_str());
    g_filter_kernels = false;
  }
  g_recorder = &recorder;
  g_user_ranges = config.metric_ranges != MetricRanges::kKernels;
  EnableLaunchCallbacks();
  EnableExtraCallback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  EnableExtraCallback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  if (config.metric_ranges == MetricRanges::kNvtx) {
    for (uint32_t cbid : {CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushEx,
                          CUPTI_CBID_NVTX_nvtxRangePop, CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
                          CUPTI_CBID_NVTX_nvtxDomainRangePop}) {
      EnableExtraCallback(CUPTI_CB_DOMAIN_NVTX, cbid);
    }
  }
  return true;
}

void RangeProfilerCallback(int domain, uint32_t cbid, const void* data) {
  if (g_recorder == nullptr) return;
  switch (domain) {
    case CUPTI_CB_DOMAIN_RUNTIME_API:
    case CUPTI_CB_DOMAIN_DRIVER_API:
      ApiCallback(static_cast<CUpti_CallbackDomain>(domain), cbid,
                  static_cast<const CUpti_CallbackData*>(data));
      break;
    case CUPTI_CB_DOMAIN_NVTX:
      if (g_recorder->config.metric_ranges == MetricRanges::kNvtx) {
        NvtxCallback(cbid, static_cast<const CUpti_NvtxData*>(data));
      }
      break;
    case CUPTI_CB_DOMAIN_RESOURCE:
      ContextEvent(cbid, static_cast<const CUpti_ResourceData*>(data));
      break;
    default:
      break;
  }
}

void FinishRangeProfiler() {
  if (g_recorder == nullptr) return;
  std::vector<RangeSession*> sessions;
  {
    std::lock_guard<std::mutex> lock(g_sessions_mutex);
    for (auto& [context, session] : g_sessions) sessions.push_back(session.get());
  }
  for (RangeSession* session : sessions) {
    if (!session->mutex().try_lock_for(kLockWait)) continue;
    if (session->usable()) {
      // A range still open at exit ends here.
      if (session->depth > 0 || session->window_start_ns != 0) CloseRange(*session);
      session->depth = 0;
      session->window_start_ns = 0;
      FlushSession(*session);
    }
    session->mutex().unlock();
  }
}

}  // namespace gpuperf::inject
