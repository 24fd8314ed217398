// A stand-in libcupti.so.13 for testing the floor tracer without a GPU: it remembers the
// buffer callbacks, and a forced flush fills one buffer with 5 kernel records and 3 memcpy
// records (only the kind field matters to the floor) and reports 2 dropped records.
#include <cupti.h>

#include <cstdio>
#include <cstring>

namespace {

CUpti_BuffersCallbackRequestFunc g_request = nullptr;
CUpti_BuffersCallbackCompleteFunc g_complete = nullptr;

}  // namespace

extern "C" {

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                           CUpti_BuffersCallbackCompleteFunc complete) {
  g_request = request;
  g_complete = complete;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  std::fprintf(stderr, "fake-cupti: enable kind=%d\n", static_cast<int>(kind));
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  std::fprintf(stderr, "fake-cupti: flush flag=%u\n", flag);
  if (!(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) || !g_request || !g_complete) {
    return CUPTI_SUCCESS;
  }
  uint8_t* buffer = nullptr;
  size_t size = 0, max_records = 0;
  g_request(&buffer, &size, &max_records);
  std::fprintf(stderr, "fake-cupti: buffer size=%zu aligned=%d\n", size,
               static_cast<int>(reinterpret_cast<uintptr_t>(buffer) % 8 == 0));
  const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                      CUPTI_ACTIVITY_KIND_MEMCPY,
                                      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                      CUPTI_ACTIVITY_KIND_MEMCPY,
                                      CUPTI_ACTIVITY_KIND_KERNEL,
                                      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                      CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL};
  size_t used = 0;
  for (CUpti_ActivityKind kind : kinds) {
    CUpti_Activity record = {};
    record.kind = kind;
    std::memcpy(buffer + used, &record, sizeof(record));
    used += sizeof(record);
  }
  g_complete(nullptr, 0, buffer, size, used);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid_size,
                                       CUpti_Activity** record) {
  uint8_t* next = *record ? reinterpret_cast<uint8_t*>(*record) + sizeof(CUpti_Activity) : buffer;
  if (next + sizeof(CUpti_Activity) > buffer + valid_size) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  *dropped = 2;
  return CUPTI_SUCCESS;
}

CUptiResult cuptiGetResultString(CUptiResult, const char** text) {
  *text = "fake";
  return CUPTI_SUCCESS;
}

}  // extern "C"
