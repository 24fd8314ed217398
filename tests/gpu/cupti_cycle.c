// A CUPTI client of the fewest lines, preloaded into a program to tell CUPTI's own behaviour
// from gpuperf's (tests/gpu/finalize_gaps.sh, docs/attach.md "Detaching"): a thread of its own
// subscribes, records kernels (activity API) for CYCLE_ON_MS, switches everything off,
// flushes, and asks the next runtime/driver API exit to call cuptiFinalize, as CUPTI's header
// shows; then waits CYCLE_OFF_MS and does it again, CYCLE_COUNT times. CYCLE_ACTIVITY=0: no
// activity API, callbacks only. CYCLE_FINALIZE=0: unsubscribe instead of finalizing.
// CYCLE_PER_CBID=1: every runtime and driver callback id switched on one by one for the window
// and off again before the finalize (as gpuperf does), not the whole domain; 2: switched on
// one by one and left on; 3: on and off one by one, then the subscriber given up and a fresh
// one (whole domains) made for the finalize.
// CYCLE_TIMESTAMP=1: a timestamp callback and the system's thread ids (as gpuperf registers).
#include <cupti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static atomic_int want_finalize, finalized, buffers_back;
static CUpti_SubscriberHandle sub;

static uint64_t CUPTIAPI monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static void per_cbid(uint32_t enable) {
  for (CUpti_CallbackId id = 1; id < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++id)
    cuptiEnableCallback(enable, sub, CUPTI_CB_DOMAIN_RUNTIME_API, id);
  for (CUpti_CallbackId id = 1; id < CUPTI_DRIVER_TRACE_CBID_SIZE; ++id)
    cuptiEnableCallback(enable, sub, CUPTI_CB_DOMAIN_DRIVER_API, id);
}
static int env(const char* name, int fallback) {
  const char* t = getenv(name);
  return t ? atoi(t) : fallback;
}
static void CUPTIAPI requested(uint8_t** b, size_t* size, size_t* max) {
  *size = 1 << 20;
  if (posix_memalign((void**)b, 8, *size) != 0) *b = NULL;
  *max = 0;
}
static void CUPTIAPI completed(CUcontext c, uint32_t s, uint8_t* b, size_t size, size_t valid) {
  (void)c; (void)s; (void)size; (void)valid;
  free(b);
  atomic_fetch_add(&buffers_back, 1);
}
static void CUPTIAPI on_callback(void* u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void* data) {
  (void)u; (void)id;
  if (!atomic_load(&want_finalize)) return;
  if (d != CUPTI_CB_DOMAIN_RUNTIME_API && d != CUPTI_CB_DOMAIN_DRIVER_API) return;
  if (((const CUpti_CallbackData*)data)->callbackSite != CUPTI_API_EXIT) return;
  int one = 1;
  if (!atomic_compare_exchange_strong(&want_finalize, &one, 0)) return;
  cuptiFinalize();
  atomic_store(&finalized, 1);
}
static void* cycle(void* arg) {
  (void)arg;
  const int on = env("CYCLE_ON_MS", 1000), off = env("CYCLE_OFF_MS", 500), n = env("CYCLE_COUNT", 15);
  const int activity = env("CYCLE_ACTIVITY", 1), fin = env("CYCLE_FINALIZE", 1);
  const int by_id = env("CYCLE_PER_CBID", 0), stamps = env("CYCLE_TIMESTAMP", 0);
  sleep(env("CYCLE_START_S", 15));
  for (int i = 1; i <= n; ++i) {
    if (cuptiSubscribe(&sub, on_callback, NULL) != CUPTI_SUCCESS) { fprintf(stderr, "cycle: subscribe failed\n"); return NULL; }
    if (stamps) {
      cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
      cuptiActivityRegisterTimestampCallback(monotonic_ns);
    }
    if (activity) {
      cuptiActivityRegisterCallbacks(requested, completed);
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    }
    if (by_id) {
      per_cbid(1);
    } else {
      cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
    }
    usleep(on * 1000);
    if (by_id == 1 || by_id == 3) per_cbid(0);
    if (by_id == 3) {
      cuptiUnsubscribe(sub);
      cuptiSubscribe(&sub, on_callback, NULL);
    }
    if (activity) {
      cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    }
    if (fin) {
      cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
      cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
      atomic_store(&finalized, 0);
      atomic_store(&want_finalize, 1);
      for (int w = 0; w < 5000 && !atomic_load(&finalized); ++w) usleep(1000);
    } else {
      cuptiUnsubscribe(sub);
    }
    fprintf(stderr, "cycle: %d done finalized=%d buffers=%d\n", i, atomic_load(&finalized), atomic_load(&buffers_back));
    usleep(off * 1000);
  }
  return NULL;
}
__attribute__((constructor)) static void start(void) {
  pthread_t t;
  pthread_create(&t, NULL, cycle, NULL);
  pthread_detach(t);
}
