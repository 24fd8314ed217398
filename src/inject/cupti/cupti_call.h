// Calling CUPTI from a guest library: a failure is logged once per call site with
// CUPTI's own error text, counted, and returned; never thrown, never fatal.
#pragma once

#include <cupti.h>

#include "inject/log.h"
#include "inject/stats.h"

namespace gpuperf::inject {

inline const char* CuptiErrorText(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) return "unknown";
  return text;
}

// A CUPTI parameter struct, zeroed, with its structSize set (the profiler APIs check it).
template <class Params>
Params CuptiParams(size_t struct_size) {
  Params params{};
  params.structSize = struct_size;
  return params;
}

#define GP_CUPTI_CALL(call)                                                      \
  ([&]() -> CUptiResult {                                                        \
    CUptiResult gp_result_ = (call);                                             \
    if (gp_result_ != CUPTI_SUCCESS) {                                           \
      ::gpuperf::inject::CountStat(::gpuperf::StatId::cupti_call_failed);        \
      ::gpuperf::inject::LogOnce("%s failed: %s", #call,                         \
                                 ::gpuperf::inject::CuptiErrorText(gp_result_)); \
    }                                                                            \
    return gp_result_;                                                           \
  }())

}  // namespace gpuperf::inject
