// Why GPU hardware counters or PC sampling could not be used, and what fixes it: one line,
// from CUPTI's result code (the numbers of cupti_result.h; the injection library checks at
// compile time that they match). Kept free of CUPTI so the messages are tested without it.
#pragma once

#include <string>
#include <string_view>

namespace gpuperf {

// The CUPTI result codes the advice knows (cupti_result.h, CUDA 13.0).
enum class CuptiCode : int {
  kNotInitialized = 15,
  kHardwareBusy = 26,
  kNotSupported = 27,
  kVirtualizedDeviceNotSupported = 33,
  kInsufficientPrivileges = 35,
  kOldProfilerApiInitialized = 36,
  kMultipleSubscribers = 39,
  kVirtualizedDeviceInsufficientPrivileges = 40,
  kConfidentialComputingNotSupported = 41,
  kCmpDeviceNotSupported = 42,
  kMigDeviceNotSupported = 43,
  kSliDeviceNotSupported = 44,
  kWslDeviceNotSupported = 45,
  kInvalidChipName = 46,
};

// "<feature> unavailable on <where>: <why> (<CUPTI's text>); fix: <what to do>; the rest of the
// recording goes on". `feature` is "hardware metrics" or "PC sampling"; `where` e.g. "device 0".
std::string HardwareFailureLine(std::string_view feature, std::string_view where, int cupti_code,
                                std::string_view cupti_text);

// The line for a GPU the profiling API does not support, from cuptiProfilerDeviceSupported's
// answer: `reason` names the part that is not supported ("vGPU", "MIG", "architecture", ...).
std::string UnsupportedDeviceLine(std::string_view feature, std::string_view where,
                                  std::string_view reason);

// The line for kernels whose cubin has no line table: samples stay at SASS offsets.
std::string NoLineInfoLine(std::string_view kernel);

}  // namespace gpuperf
