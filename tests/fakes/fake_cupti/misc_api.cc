// Version, result strings, last error, timestamps, thread ids, names and the small queries
// (context/device/stream ids) of the CUPTI API.
#include <cupti.h>
#include <unistd.h>

#include <cstdlib>

#include "fake_cupti/state.h"

using fake_cupti::Fail;
using fake_cupti::G;

extern "C" {

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  if (version == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  if (str == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  const char* name = fake_cupti::ResultName(result);
  // The real library answers an unknown code with "<unknown>" and INVALID_PARAMETER.
  *str = name != nullptr ? name : "<unknown>";
  return name != nullptr ? CUPTI_SUCCESS : Fail(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult CUPTIAPI cuptiGetErrorMessage(CUptiResult result, const char** str) {
  if (str == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  const char* name = fake_cupti::ResultName(result);
  *str = name != nullptr ? name : "<unknown>";
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetLastError(void) {
  return fake_cupti::TakeLastError();
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  if (timestamp == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *timestamp = fake_cupti::Now();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT &&
      type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
    return Fail(CUPTI_ERROR_NOT_SUPPORTED);
  }
  G().thread_id_type = type;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType* type) {
  if (type == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *type = static_cast<CUpti_ActivityThreadIdType>(G().thread_id_type.load());
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                          const char** name) {
  if (name == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *name = fake_cupti::CallbackName(domain, cbid);
  return *name != nullptr ? CUPTI_SUCCESS : Fail(CUPTI_ERROR_INVALID_PARAMETER);
}

CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t* context_id) {
  if (context_id == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (context == nullptr) return Fail(CUPTI_ERROR_INVALID_CONTEXT);
  *context_id = reinterpret_cast<fake_cupti::FakeContext*>(context)->id;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext context, uint32_t* device_id) {
  if (device_id == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  if (context == nullptr) return Fail(CUPTI_ERROR_INVALID_CONTEXT);
  *device_id = reinterpret_cast<fake_cupti::FakeContext*>(context)->device_id;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext context, CUstream stream,
                                        uint8_t per_thread_stream, uint32_t* stream_id) {
  if (stream_id == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  // FAKE_CUPTI_STREAM_ID_DELAY_US: a slow lookup, so that a callback which makes it is still
  // running when a client detaches (the attach tests' `syncs` phase).
  static const long delay_us = [] {
    const char* text = getenv("FAKE_CUPTI_STREAM_ID_DELAY_US");
    return text != nullptr ? atol(text) : 0L;
  }();
  if (delay_us > 0) usleep(static_cast<useconds_t>(delay_us));
  fake_cupti::NoteCallFromCallback();
  fake_cupti::State& g = G();
  std::lock_guard<std::mutex> lock(g.mu);
  auto it = g.streams.find(stream);
  if (it == g.streams.end()) return Fail(CUPTI_ERROR_INVALID_STREAM);
  *stream_id = it->second->stream_id;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t* stream_id) {
  return cuptiGetStreamIdEx(context, stream, 0, stream_id);
}

CUptiResult CUPTIAPI cuptiComputeCapabilitySupported(int major, int minor, int* support) {
  if (support == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *support = major >= 7 ? 1 : 0;  // CUDA 13 supports Turing (7.5) and newer
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiDeviceSupported(CUdevice device, int* support) {
  if (support == nullptr) return Fail(CUPTI_ERROR_INVALID_PARAMETER);
  *support = 1;
  return CUPTI_SUCCESS;
}

}  // extern "C"
