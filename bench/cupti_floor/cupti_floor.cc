// The floor: the least a CUPTI-based tracer can do and still see every kernel. It enables
// CONCURRENT_KERNEL activity only, hands CUPTI 8 MiB buffers, counts kernel records when a
// buffer completes (nothing is written anywhere) and flushes at exit. Whatever gpuperf costs
// above this is gpuperf's own cost; this much every CUPTI tool pays.
//
// Loaded by the CUDA driver: CUDA_INJECTION64_PATH=/abs/path/libcupti_floor.so CMD
// At exit it prints one line to stderr: "cupti-floor: kernels=<N> dropped=<D>".
#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "kernel_counting_buffers.h"

namespace {

using cupti_floor::g_dropped;
using cupti_floor::g_kernels;
using cupti_floor::OnBufferCompleted;
using cupti_floor::OnBufferRequested;

std::atomic<bool> g_initialized{false};
std::atomic<bool> g_reported{false};

bool Ok(CUptiResult result, const char* call) {
  if (result == CUPTI_SUCCESS) return true;
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS) text = "unknown error";
  std::fprintf(stderr, "cupti-floor: %s failed: %s\n", call, text);
  return false;
}

void FlushAndReport() {
  if (g_reported.exchange(true)) return;
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::fprintf(stderr, "cupti-floor: kernels=%llu dropped=%llu\n",
               static_cast<unsigned long long>(g_kernels.load()),
               static_cast<unsigned long long>(g_dropped.load()));
}

}  // namespace

// Called by the CUDA driver once per process, from cuInit. Returns 1 on success.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (g_initialized.exchange(true)) return 1;
  if (!Ok(cuptiActivityRegisterCallbacks(OnBufferRequested, OnBufferCompleted),
          "cuptiActivityRegisterCallbacks") ||
      !Ok(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
          "cuptiActivityEnable(CONCURRENT_KERNEL)")) {
    return 0;
  }
  // Records still in CUPTI's buffers at exit would be lost without a forced flush.
  std::atexit(FlushAndReport);
  return 1;
}
