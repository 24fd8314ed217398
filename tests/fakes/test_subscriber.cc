// A minimal CUPTI injection library for testing the fake libcupti: it subscribes, enables the
// activity kinds gpuperf uses, checks what CUPTI promises (ENTER/EXIT pairing, unique
// correlation ids, correlationData carried from ENTER to EXIT, which thread a buffer arrives
// on, records that parse back, kernels whose correlation ids were seen at API ENTER) and
// prints one line of counts when the process ends:
//   test-subscriber: pid=.. subscribed=1 enter=.. exit=.. order_errors=0 ... kernels=.. ...
// Knobs (environment): TEST_SUBSCRIBER_BUFFER (bytes, default 16384), _MAX_RECORDS,
// _FLUSH_PERIOD (ms, cuptiActivityFlushPeriod), _PERIODIC_FLUSH_MS (own thread calling
// cuptiActivityFlushAll(0) and printing the counts so far), _REFUSE_AFTER (decline buffer requests
// after N), _SIGNAL=1 (flush on SIGTERM from a helper thread, then die by the signal),
// _GRAPH_TRACE=1, _GLOBAL_BUFFERS=1.
#include <cupti.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

// clang-format off
#define COUNTERS(X)                                                                    \
  X(enter) X(exit) X(order_errors) X(correlation_data_errors) X(dup_correlation)       \
  X(buffers) X(buffers_on_caller) X(buffers_on_cupti_thread) X(buffers_on_app_thread)  \
  X(records) X(kernels) X(kernels_matched) X(incomplete) X(memcpys)                    \
  X(memcpys_with_runtime_id) X(memsets) X(syncs) X(memory) X(markers) X(runtime_api)   \
  X(driver_api) X(api_tid_mismatch) X(time_errors) X(external) X(external_ok)          \
  X(graph_traces) X(devices) X(contexts) X(overheads) X(other_records) X(bad_records)  \
  X(dropped) X(contexts_created) X(contexts_destroyed) X(sync_callbacks)               \
  X(launch_symbols) X(refused_buffers)
// clang-format on

struct Counters {
#define DECLARE(name) std::atomic<unsigned long long> name{0};
  COUNTERS(DECLARE)
#undef DECLARE
};
Counters c;

pid_t g_init_pid = 0;
bool g_subscribed = false;
char g_subscribe_error[160] = "";
size_t g_buffer_size = 16384;
size_t g_max_records = 0;
long g_refuse_after = -1;
std::atomic<long> g_requests{0};
thread_local bool t_in_flush = false;
thread_local std::vector<uint32_t> t_open_calls;  // correlation ids between ENTER and EXIT

// Leaked on purpose: the periodic flusher and CUPTI's worker may still run while static
// destructors do at exit.
std::mutex& g_mu = *new std::mutex;
auto& g_correlation_ids = *new std::unordered_set<uint32_t>;               // seen at API ENTER
auto& g_correlation_thread = *new std::unordered_map<uint32_t, uint32_t>;  // id -> tid at ENTER
auto& g_app_threads = *new std::unordered_set<uint32_t>;
std::atomic<bool> g_exiting{false};

uint32_t Tid() {
  return static_cast<uint32_t>(syscall(SYS_gettid));
}

uint64_t CUPTIAPI MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void CUPTIAPI OnCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const void* data) {
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) c.contexts_created++;
    if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) c.contexts_destroyed++;
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_SYNCHRONIZE) {
    c.sync_callbacks++;
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  const uint64_t magic = 0x5eed000000000000ull | info->correlationId;
  if (info->callbackSite == CUPTI_API_ENTER) {
    c.enter++;
    *info->correlationData = magic;
    t_open_calls.push_back(info->correlationId);
    if (info->symbolName != nullptr) c.launch_symbols++;
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_correlation_ids.insert(info->correlationId).second) c.dup_correlation++;
    g_correlation_thread[info->correlationId] = Tid();
    g_app_threads.insert(Tid());
  } else {
    c.exit++;
    if (t_open_calls.empty() || t_open_calls.back() != info->correlationId) c.order_errors++;
    if (!t_open_calls.empty()) t_open_calls.pop_back();
    if (*info->correlationData != magic) c.correlation_data_errors++;
  }
}

void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  long n = g_requests++;
  if (g_refuse_after >= 0 && n >= g_refuse_after) {
    c.refused_buffers++;
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;
    return;
  }
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, g_buffer_size));
  *size = g_buffer_size;
  *max_records = g_max_records;
}

void CountRecord(const CUpti_Activity* record, const CUpti_Activity* next) {
  c.records++;
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      c.kernels++;
      if (k->start == 0 && k->end == 0) {
        c.incomplete++;
      } else if (k->end < k->start) {
        c.time_errors++;
      }
      if (k->name == nullptr) c.bad_records++;
      std::lock_guard<std::mutex> lock(g_mu);
      if (g_correlation_ids.count(k->correlationId)) c.kernels_matched++;
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
      c.memcpys++;
      if (m->runtimeCorrelationId != 0 && m->runtimeCorrelationId != m->correlationId) {
        c.memcpys_with_runtime_id++;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET:
      c.memsets++;
      break;
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      c.syncs++;
      break;
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      c.memory++;
      break;
    case CUPTI_ACTIVITY_KIND_MARKER:
      c.markers++;
      break;
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
      const auto* api = reinterpret_cast<const CUpti_ActivityAPI*>(record);
      (record->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? c.runtime_api : c.driver_api)++;
      if (api->end < api->start || api->start == 0) c.time_errors++;
      if (api->processId != static_cast<uint32_t>(getpid())) c.api_tid_mismatch++;
      std::lock_guard<std::mutex> lock(g_mu);
      auto it = g_correlation_thread.find(api->correlationId);
      if (it == g_correlation_thread.end() || it->second != api->threadId) c.api_tid_mismatch++;
      break;
    }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      // Must come just before the API record it belongs to.
      const auto* ext = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
      c.external++;
      if (next != nullptr &&
          (next->kind == CUPTI_ACTIVITY_KIND_RUNTIME || next->kind == CUPTI_ACTIVITY_KIND_DRIVER) &&
          reinterpret_cast<const CUpti_ActivityAPI*>(next)->correlationId == ext->correlationId) {
        c.external_ok++;
      }
      break;
    }
    case CUPTI_ACTIVITY_KIND_GRAPH_TRACE:
      c.graph_traces++;
      break;
    case CUPTI_ACTIVITY_KIND_DEVICE:
      c.devices++;
      break;
    case CUPTI_ACTIVITY_KIND_CONTEXT:
      c.contexts++;
      break;
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      c.overheads++;
      break;
    default:
      c.other_records++;
      break;
  }
}

void CUPTIAPI OnBufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  c.buffers++;
  if (t_in_flush) {
    c.buffers_on_caller++;
  } else {
    std::lock_guard<std::mutex> lock(g_mu);
    (g_app_threads.count(Tid()) ? c.buffers_on_app_thread : c.buffers_on_cupti_thread)++;
  }
  CUpti_Activity* record = nullptr;
  CUpti_Activity* previous = nullptr;
  CUptiResult status;
  // Look one record ahead, so an external correlation record can see its API record.
  while (true) {
    status = cuptiActivityGetNextRecord(buffer, valid, &record);
    if (status != CUPTI_SUCCESS) break;
    if (previous != nullptr) CountRecord(previous, record);
    previous = record;
  }
  if (previous != nullptr) CountRecord(previous, nullptr);
  if (status != CUPTI_ERROR_MAX_LIMIT_REACHED) c.bad_records++;
  free(buffer);
}

void Flush(uint32_t flags) {
  t_in_flush = true;
  cuptiActivityFlushAll(flags);
  t_in_flush = false;
}

void PrintSummary() {
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) {
    c.dropped += dropped;
  }
  char line[2048];
  int n = snprintf(line, sizeof(line), "test-subscriber: pid=%d subscribed=%d",
                   static_cast<int>(getpid()), g_subscribed ? 1 : 0);
#define PRINT(name) n += snprintf(line + n, sizeof(line) - n, " " #name "=%llu", c.name.load());
  COUNTERS(PRINT)
#undef PRINT
  {
    std::lock_guard<std::mutex> lock(g_mu);
    n += snprintf(line + n, sizeof(line) - n, " app_threads=%zu", g_app_threads.size());
  }
  if (g_subscribe_error[0] != '\0') {
    n += snprintf(line + n, sizeof(line) - n, " subscribe_error=\"%s\"", g_subscribe_error);
  }
  snprintf(line + n, sizeof(line) - n, "\n");
  fputs(line, stdout);
  fflush(stdout);
}

void AtExit() {
  if (getpid() != g_init_pid) {
    // A forked child that did not exec: the parent's buffers were copied into it, and
    // flushing them here would deliver the parent's records twice.
    printf("test-subscriber: pid=%d forked child, not flushing\n", static_cast<int>(getpid()));
    fflush(stdout);
    return;
  }
  g_exiting = true;
  Flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  PrintSummary();
}

sem_t g_signal_sem;
void OnSigterm(int) {
  sem_post(&g_signal_sem);
}  // the only async-signal-safe step

void SignalFlusher() {
  while (sem_wait(&g_signal_sem) != 0) {
  }
  Flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  PrintSummary();
  signal(SIGTERM, SIG_DFL);
  raise(SIGTERM);
}

long EnvOr(const char* name, long fallback) {
  const char* value = getenv(name);
  return value != nullptr && *value != '\0' ? atol(value) : fallback;
}

void Check(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  fprintf(stderr, "test-subscriber: %s: %s\n", what, text != nullptr ? text : "?");
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return 1;
  g_init_pid = getpid();
  g_buffer_size = static_cast<size_t>(EnvOr("TEST_SUBSCRIBER_BUFFER", 16384));
  g_max_records = static_cast<size_t>(EnvOr("TEST_SUBSCRIBER_MAX_RECORDS", 0));
  g_refuse_after = EnvOr("TEST_SUBSCRIBER_REFUSE_AFTER", -1);

  // The clock goes first: it must be in place before any kind is enabled.
  Check(cuptiActivityRegisterTimestampCallback(MonotonicNs), "timestamp callback");
  Check(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "thread id type");

  CUpti_SubscriberHandle subscriber = nullptr;
  char existing[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
  CUpti_SubscriberParams params{};
  params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
  params.subscriberName = "test-subscriber";
  params.oldSubscriberName = existing;
  params.oldSubscriberSize = sizeof(existing);
  CUptiResult result = cuptiSubscribe_v2(&subscriber, OnCallback, nullptr, &params);
  if (result == CUPTI_SUCCESS) {
    g_subscribed = true;
    Check(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API), "runtime domain");
    Check(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API), "driver domain");
    Check(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE), "resource domain");
    Check(cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_SYNCHRONIZE), "sync domain");
  } else {
    // Keep tracing activity without callbacks, the way gpuperf degrades.
    const char* text = nullptr;
    cuptiGetResultString(result, &text);
    snprintf(g_subscribe_error, sizeof(g_subscribe_error), "%s; held by %s", text, existing);
  }

  if (EnvOr("TEST_SUBSCRIBER_GLOBAL_BUFFERS", 0) != 0) {
    uint8_t per_thread = 0;
    size_t size = sizeof(per_thread);
    Check(cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size,
                                    &per_thread),
          "per-thread attribute");
  }
  Check(cuptiActivityRegisterCallbacks(OnBufferRequested, OnBufferCompleted), "buffer callbacks");
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MEMORY2,
        CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_OVERHEAD, CUPTI_ACTIVITY_KIND_DEVICE,
        CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION}) {
    Check(cuptiActivityEnable(kind), "enable kind");
  }
  if (EnvOr("TEST_SUBSCRIBER_GRAPH_TRACE", 0) != 0) {
    Check(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE), "enable graph trace");
  }
  if (long period = EnvOr("TEST_SUBSCRIBER_FLUSH_PERIOD", 0); period > 0) {
    Check(cuptiActivityFlushPeriod(static_cast<uint32_t>(period)), "flush period");
  }
  if (long period = EnvOr("TEST_SUBSCRIBER_PERIODIC_FLUSH_MS", 0); period > 0) {
    std::thread([period] {
      while (true) {
        std::this_thread::sleep_for(std::chrono::milliseconds(period));
        if (g_exiting) return;
        Flush(0);
        // What a process killed now would keep (the last such line before an _exit).
        PrintSummary();
      }
    }).detach();
  }
  if (EnvOr("TEST_SUBSCRIBER_SIGNAL", 0) != 0) {
    sem_init(&g_signal_sem, 0, 0);
    std::thread(SignalFlusher).detach();
    struct sigaction action {};
    action.sa_handler = OnSigterm;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
  }
  atexit(AtExit);
  return 1;
}
