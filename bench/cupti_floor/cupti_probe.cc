// The probe: the floor tracer (cupti_floor.cc) plus one CUPTI feature at a time, so the
// launch-bound example can price each feature a full recorder needs: API activity records,
// API callbacks (launch ids only or whole domains), the timestamp callback, a clock read and
// a stack unwind inside the callback. gpuperf's design follows from these prices
// (docs/performance.md, "Where the time goes").
//
// Loaded like the floor: CUDA_INJECTION64_PATH=/abs/path/libcupti_probe.so CMD, with
// PROBE=feature,feature,... (empty: exactly the floor). Features:
//   rt_act, drv_act       RUNTIME / DRIVER activity records
//   cb_rt, cb_drv         an empty callback on the launch callback ids of that domain
//   cb_rt_all, cb_drv_all the callback on every id of that domain
//   exit_off              take enter callbacks only (the exit site returns at once)
//   clock                 clock_gettime(CLOCK_MONOTONIC) at each callback site
//   tsc                   rdtsc at each callback site instead
//   unw                   gpuperf's libunwind capture at enter of the outermost call
//   fp                    gpuperf's frame-pointer walk at enter of the outermost call
// (both from src/unwind/unwinder.cc, compiled in by build.sh)
//   fpcheck               at the first launch, compare the fp walk with libunwind's (stderr)
//   ts                    register a CLOCK_MONOTONIC timestamp callback
//   kern                  the floor's own CONCURRENT_KERNEL kind is the probed feature: off
//                         at start, switched by the toggle (what kernel records cost a launch)
//   pinned                CUPTI's kernel-timing buffers in pinned host memory, not device
//                         memory (CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED)
//   devbuf                32 MiB kernel-timing buffers, 4 made at start (CUPTI's default:
//                         3.2 MB, 3 at start; CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE)
// (pinned and devbuf are set before the first context, as CUPTI asks: with kern they say
// whether where and how CUPTI keeps kernel times changes what a launch pays)
// For a paired measurement (launch_bound --ab cupti_probe_toggle) it exports
// cupti_probe_toggle(on), which switches the probed callbacks and activity kinds on and off.
// At start it prints the clock source and what one clock_gettime and one rdtsc cost here.
// At exit: "cupti-probe: kernels=<N> dropped=<D> callbacks=<C> probe=<PROBE>".
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "kernel_counting_buffers.h"
#include "unwind/unwinder.h"

namespace {

using cupti_floor::g_dropped;
using cupti_floor::g_kernels;
using cupti_floor::OnBufferCompleted;
using cupti_floor::OnBufferRequested;

struct Features {
  bool rt_act, drv_act, cb_rt, cb_drv, cb_rt_all, cb_drv_all, exit_off, clock, tsc, unw, fp,
      fpcheck, ts, kern, pinned, devbuf;
};
Features g_features{};
std::string g_probe;
std::atomic<uint64_t> g_callbacks{0};
std::atomic<bool> g_initialized{false}, g_reported{false};
CUpti_SubscriberHandle g_subscriber = nullptr;
std::atomic<uint64_t> g_sink{0};  // keeps the probes' results alive

bool Has(const std::string& list, const char* name) {
  std::string padded = "," + list + ",";
  return padded.find("," + std::string(name) + ",") != std::string::npos;
}

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t CUPTIAPI Timestamp() {
  return NowNs();
}

thread_local uint32_t t_depth = 0;

const char* ModuleOf(uint64_t pc) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(pc), &info) == 0 || info.dli_fname == nullptr) return "?";
  const char* slash = std::strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

void CompareWalks() {
  uint64_t unw[64] = {};
  uint64_t fp[64] = {};
  int nu = gpuperf::CaptureStack(unw, 64);
  int nf = gpuperf::FramePointerWalk(fp, 64);
  std::fprintf(stderr, "cupti-probe: fpcheck unw_depth=%d fp_depth=%d\n", nu, nf);
  for (int i = 0; i < nu || i < nf; ++i) {
    std::fprintf(
        stderr, "cupti-probe:   %2d unw %-14llx %-24s fp %-14llx %s\n", i,
        static_cast<unsigned long long>(i < nu ? unw[i] : 0), i < nu ? ModuleOf(unw[i]) : "",
        static_cast<unsigned long long>(i < nf ? fp[i] : 0), i < nf ? ModuleOf(fp[i]) : "");
  }
}

void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId, const void* cbdata) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
  if (data->callbackSite == CUPTI_API_EXIT) {
    if (t_depth > 0) --t_depth;
    if (g_features.exit_off) return;
    if (g_features.clock) g_sink.fetch_add(NowNs() & 1, std::memory_order_relaxed);
    if (g_features.tsc) g_sink.fetch_add(__builtin_ia32_rdtsc() & 1, std::memory_order_relaxed);
    return;
  }
  g_callbacks.fetch_add(1, std::memory_order_relaxed);
  uint64_t sink = 0;
  if (g_features.clock) sink += NowNs();
  if (g_features.tsc) sink += __builtin_ia32_rdtsc();
  if (t_depth++ == 0) {
    uint64_t pcs[128];
    if (g_features.fpcheck) {
      static std::atomic<bool> once{false};
      if (!once.exchange(true)) CompareWalks();
    }
    if (g_features.unw) sink += gpuperf::CaptureStack(pcs, 128);
    if (g_features.fp) sink += gpuperf::FramePointerWalk(pcs, 128);
  }
  if (sink == 1) g_sink.fetch_add(1, std::memory_order_relaxed);
}

void PrintClockCosts() {
  char source[64] = "?";
  if (FILE* file =
          std::fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r")) {
    if (std::fgets(source, sizeof(source), file)) source[std::strcspn(source, "\n")] = 0;
    std::fclose(file);
  }
  constexpr int kCalls = 1 << 20;
  uint64_t sink = 0;
  const uint64_t t0 = NowNs();
  for (int i = 0; i < kCalls; ++i) sink += NowNs();
  const uint64_t t1 = NowNs();
  for (int i = 0; i < kCalls; ++i) sink += __builtin_ia32_rdtsc();
  const uint64_t t2 = NowNs();
  g_sink.fetch_add(sink & 1);
  std::fprintf(stderr, "cupti-probe: clocksource=%s clock_gettime=%.1f ns rdtsc=%.1f ns\n", source,
               double(t1 - t0) / kCalls, double(t2 - t1) / kCalls);
}

bool IsLaunch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const char* name = nullptr;
  if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) return false;
  std::string text = name;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    return text.rfind("cudaLaunch", 0) == 0 || text.rfind("__cudaLaunch", 0) == 0 ||
           text.rfind("cudaGraphLaunch", 0) == 0;
  }
  return text.rfind("cuLaunch", 0) == 0 || text.rfind("cuGraphLaunch", 0) == 0;
}

void EnableLaunchIds(uint32_t enable, CUpti_CallbackDomain domain, uint32_t size) {
  for (uint32_t cbid = 1; cbid < size; ++cbid) {
    if (IsLaunch(domain, cbid)) cuptiEnableCallback(enable, g_subscriber, domain, cbid);
  }
}

void EnableProbed(bool on) {
  const Features& f = g_features;
  auto activity = on ? cuptiActivityEnable : cuptiActivityDisable;
  if (f.kern) activity(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (f.rt_act) activity(CUPTI_ACTIVITY_KIND_RUNTIME);
  if (f.drv_act) activity(CUPTI_ACTIVITY_KIND_DRIVER);
  if (g_subscriber == nullptr) return;
  const uint32_t enable = on ? 1 : 0;
  if (f.cb_rt_all) cuptiEnableDomain(enable, g_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  if (f.cb_drv_all) cuptiEnableDomain(enable, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API);
  if (f.cb_rt) EnableLaunchIds(enable, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
  if (f.cb_drv) EnableLaunchIds(enable, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
}

// Sets one activity attribute, saying on stderr when CUPTI refuses it.
template <typename T>
void SetAttribute(CUpti_ActivityAttribute attribute, T value) {
  size_t size = sizeof(value);
  if (cuptiActivitySetAttribute(attribute, &size, &value) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "cupti-probe: activity attribute %d refused\n",
                 static_cast<int>(attribute));
  }
}

void FlushAndReport() {
  if (g_reported.exchange(true)) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::fprintf(stderr, "cupti-probe: kernels=%llu dropped=%llu callbacks=%llu probe=%s\n",
               static_cast<unsigned long long>(g_kernels.load()),
               static_cast<unsigned long long>(g_dropped.load()),
               static_cast<unsigned long long>(g_callbacks.load()), g_probe.c_str());
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void cupti_probe_toggle(int on) {
  EnableProbed(on != 0);
}

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (g_initialized.exchange(true)) return 1;
  const char* probe = std::getenv("PROBE");
  g_probe = probe ? probe : "";
  Features& f = g_features;
  f = {Has(g_probe, "rt_act"),   Has(g_probe, "drv_act"),   Has(g_probe, "cb_rt"),
       Has(g_probe, "cb_drv"),   Has(g_probe, "cb_rt_all"), Has(g_probe, "cb_drv_all"),
       Has(g_probe, "exit_off"), Has(g_probe, "clock"),     Has(g_probe, "tsc"),
       Has(g_probe, "unw"),      Has(g_probe, "fp"),        Has(g_probe, "fpcheck"),
       Has(g_probe, "ts"),       Has(g_probe, "kern"),      Has(g_probe, "pinned"),
       Has(g_probe, "devbuf")};
  if (f.unw || f.fpcheck) gpuperf::InitUnwinder();
  if (f.fpcheck) PrintClockCosts();
  if (f.ts) cuptiActivityRegisterTimestampCallback(Timestamp);
  if (f.pinned) SetAttribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, uint8_t{1});
  if (f.devbuf) {
    SetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, size_t{32} << 20);
    SetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, size_t{4});
  }
  cuptiActivityRegisterCallbacks(OnBufferRequested, OnBufferCompleted);
  if (!f.kern) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if ((f.cb_rt || f.cb_drv || f.cb_rt_all || f.cb_drv_all) &&
      cuptiSubscribe(&g_subscriber, OnCallback, nullptr) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "cupti-probe: cuptiSubscribe failed\n");
    return 0;
  }
  EnableProbed(true);
  std::atexit(FlushAndReport);
  return 1;
}
