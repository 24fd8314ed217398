#include "base/cuda_errors.h"

#include <algorithm>
#include <iterator>
#include <string_view>

namespace gpuperf {
namespace {

struct CodeName {
  int32_t code;
  std::string_view name;
};

// The codes applications and frameworks actually hit (values from CUDA 13's
// driver_types.h and cuda.h), sorted by code.
constexpr CodeName kRuntimeErrors[] = {
    {0, "cudaSuccess"},
    {1, "cudaErrorInvalidValue"},
    {2, "cudaErrorMemoryAllocation"},
    {3, "cudaErrorInitializationError"},
    {4, "cudaErrorCudartUnloading"},
    {9, "cudaErrorInvalidConfiguration"},
    {13, "cudaErrorInvalidSymbol"},
    {17, "cudaErrorInvalidDevicePointer"},
    {21, "cudaErrorInvalidMemcpyDirection"},
    {35, "cudaErrorInsufficientDriver"},
    {36, "cudaErrorCallRequiresNewerDriver"},
    {46, "cudaErrorDevicesUnavailable"},
    {52, "cudaErrorMissingConfiguration"},
    {98, "cudaErrorInvalidDeviceFunction"},
    {100, "cudaErrorNoDevice"},
    {101, "cudaErrorInvalidDevice"},
    {200, "cudaErrorInvalidKernelImage"},
    {201, "cudaErrorDeviceUninitialized"},
    {209, "cudaErrorNoKernelImageForDevice"},
    {214, "cudaErrorECCUncorrectable"},
    {217, "cudaErrorPeerAccessUnsupported"},
    {218, "cudaErrorInvalidPtx"},
    {222, "cudaErrorUnsupportedPtxVersion"},
    {400, "cudaErrorInvalidResourceHandle"},
    {401, "cudaErrorIllegalState"},
    {500, "cudaErrorSymbolNotFound"},
    {600, "cudaErrorNotReady"},
    {700, "cudaErrorIllegalAddress"},
    {701, "cudaErrorLaunchOutOfResources"},
    {702, "cudaErrorLaunchTimeout"},
    {704, "cudaErrorPeerAccessAlreadyEnabled"},
    {705, "cudaErrorPeerAccessNotEnabled"},
    {709, "cudaErrorContextIsDestroyed"},
    {710, "cudaErrorAssert"},
    {712, "cudaErrorHostMemoryAlreadyRegistered"},
    {713, "cudaErrorHostMemoryNotRegistered"},
    {715, "cudaErrorIllegalInstruction"},
    {716, "cudaErrorMisalignedAddress"},
    {719, "cudaErrorLaunchFailure"},
    {720, "cudaErrorCooperativeLaunchTooLarge"},
    {800, "cudaErrorNotPermitted"},
    {801, "cudaErrorNotSupported"},
    {900, "cudaErrorStreamCaptureUnsupported"},
    {901, "cudaErrorStreamCaptureInvalidated"},
    {906, "cudaErrorStreamCaptureImplicit"},
    {909, "cudaErrorTimeout"},
    {910, "cudaErrorGraphExecUpdateFailure"},
    {999, "cudaErrorUnknown"},
};

constexpr CodeName kDriverErrors[] = {
    {0, "CUDA_SUCCESS"},
    {1, "CUDA_ERROR_INVALID_VALUE"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY"},
    {3, "CUDA_ERROR_NOT_INITIALIZED"},
    {4, "CUDA_ERROR_DEINITIALIZED"},
    {34, "CUDA_ERROR_STUB_LIBRARY"},
    {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"},
    {46, "CUDA_ERROR_DEVICE_UNAVAILABLE"},
    {100, "CUDA_ERROR_NO_DEVICE"},
    {101, "CUDA_ERROR_INVALID_DEVICE"},
    {200, "CUDA_ERROR_INVALID_IMAGE"},
    {201, "CUDA_ERROR_INVALID_CONTEXT"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE"},
    {217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED"},
    {218, "CUDA_ERROR_INVALID_PTX"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
    {301, "CUDA_ERROR_FILE_NOT_FOUND"},
    {400, "CUDA_ERROR_INVALID_HANDLE"},
    {401, "CUDA_ERROR_ILLEGAL_STATE"},
    {500, "CUDA_ERROR_NOT_FOUND"},
    {600, "CUDA_ERROR_NOT_READY"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT"},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED"},
    {705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED"},
    {708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE"},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED"},
    {710, "CUDA_ERROR_ASSERT"},
    {712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"},
    {713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED"},
    {715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {716, "CUDA_ERROR_MISALIGNED_ADDRESS"},
    {719, "CUDA_ERROR_LAUNCH_FAILED"},
    {720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"},
    {800, "CUDA_ERROR_NOT_PERMITTED"},
    {801, "CUDA_ERROR_NOT_SUPPORTED"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
    {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"},
    {909, "CUDA_ERROR_TIMEOUT"},
    {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"},
    {999, "CUDA_ERROR_UNKNOWN"},
};

template <size_t N>
std::string_view Find(const CodeName (&table)[N], int32_t code) {
  auto it = std::lower_bound(std::begin(table), std::end(table), code,
                             [](const CodeName& entry, int32_t c) { return entry.code < c; });
  return it != std::end(table) && it->code == code ? it->name : std::string_view();
}

}  // namespace

std::string CudaErrorName(ApiDomain domain, int32_t code) {
  std::string_view name =
      domain == ApiDomain::kDriver ? Find(kDriverErrors, code) : Find(kRuntimeErrors, code);
  if (name.empty()) return "error " + std::to_string(code);
  return std::string(name);
}

bool IsCudaFailure(int32_t code) {
  return code != 0 && code != 600;
}

}  // namespace gpuperf
