// Names of the CUDA status codes that API records carry (ApiRecord::return_code): a
// cudaError_t for runtime calls, a CUresult for driver calls.
#pragma once

#include <cstdint>
#include <string>

#include "gpuperf/records.h"

namespace gpuperf {

// "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", or "error N" for a code
// not in our table (new CUDA versions add codes).
std::string CudaErrorName(ApiDomain domain, int32_t code);

// Whether a non-zero code means the call failed. "Not ready" (600 in both APIs) is the
// normal answer of cudaStreamQuery/cudaEventQuery for unfinished work, not a failure.
bool IsCudaFailure(int32_t code);

}  // namespace gpuperf
