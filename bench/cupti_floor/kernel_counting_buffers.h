// The activity buffers of the floor tracer and the probe: 8 MiB each, kernel records counted
// when CUPTI completes a buffer (nothing is written anywhere), CUPTI's drops added up.
// Header-only: each tracer is one translation unit built by build.sh.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

namespace cupti_floor {

inline constexpr size_t kBufferBytes = 8 << 20;
inline constexpr size_t kBufferAlignment = 8;  // CUPTI wants 8-byte aligned buffers

inline std::atomic<uint64_t> g_kernels{0};
inline std::atomic<uint64_t> g_dropped{0};

inline void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;  // as many as fit
}

inline void CUPTIAPI OnBufferCompleted(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                       size_t /*size*/, size_t valid_size) {
  uint64_t kernels = 0;
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ++kernels;
  }
  g_kernels.fetch_add(kernels, std::memory_order_relaxed);
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) {
    g_dropped.fetch_add(dropped, std::memory_order_relaxed);
  }
  std::free(buffer);
}

}  // namespace cupti_floor
