#include "format/enum_names.h"

namespace gpuperf {

std::string_view EnumName(ApiDomain value) {
  switch (value) {
    case ApiDomain::kRuntime:
      return "runtime";
    case ApiDomain::kDriver:
      return "driver";
    case ApiDomain::kInternal:
      return "internal";
    case ApiDomain::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view EnumName(MemcpyKind value) {
  switch (value) {
    case MemcpyKind::kHtoD:
      return "HtoD";
    case MemcpyKind::kDtoH:
      return "DtoH";
    case MemcpyKind::kHtoA:
      return "HtoA";
    case MemcpyKind::kAtoH:
      return "AtoH";
    case MemcpyKind::kAtoA:
      return "AtoA";
    case MemcpyKind::kAtoD:
      return "AtoD";
    case MemcpyKind::kDtoA:
      return "DtoA";
    case MemcpyKind::kDtoD:
      return "DtoD";
    case MemcpyKind::kHtoH:
      return "HtoH";
    case MemcpyKind::kPtoP:
      return "PtoP";
    case MemcpyKind::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view EnumName(MemoryKind value) {
  switch (value) {
    case MemoryKind::kPageable:
      return "pageable";
    case MemoryKind::kPinned:
      return "pinned";
    case MemoryKind::kDevice:
      return "device";
    case MemoryKind::kArray:
      return "array";
    case MemoryKind::kManaged:
      return "managed";
    case MemoryKind::kDeviceStatic:
      return "device_static";
    case MemoryKind::kManagedStatic:
      return "managed_static";
    case MemoryKind::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view EnumName(SyncKind value) {
  switch (value) {
    case SyncKind::kEventSynchronize:
      return "event_synchronize";
    case SyncKind::kStreamWaitEvent:
      return "stream_wait_event";
    case SyncKind::kStreamSynchronize:
      return "stream_synchronize";
    case SyncKind::kContextSynchronize:
      return "context_synchronize";
    case SyncKind::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view EnumName(MemoryOp value) {
  switch (value) {
    case MemoryOp::kAllocation:
      return "alloc";
    case MemoryOp::kRelease:
      return "free";
    case MemoryOp::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view EnumName(NvtxKind value) {
  switch (value) {
    case NvtxKind::kRange:
      return "range";
    case NvtxKind::kMark:
      return "mark";
  }
  return "unknown";
}

std::string_view EnumName(OverheadKind value) {
  switch (value) {
    case OverheadKind::kDriverCompiler:
      return "driver_compiler";
    case OverheadKind::kBufferFlush:
      return "buffer_flush";
    case OverheadKind::kInstrumentation:
      return "instrumentation";
    case OverheadKind::kResource:
      return "resource";
    case OverheadKind::kModuleLoading:
      return "module_loading";
    case OverheadKind::kLazyFunctionLoading:
      return "lazy_function_loading";
    case OverheadKind::kCommandBufferFull:
      return "command_buffer_full";
    case OverheadKind::kActivityBufferRequest:
      return "activity_buffer_request";
    case OverheadKind::kUvmActivityInit:
      return "uvm_activity_init";
    case OverheadKind::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view EnumName(OffCpuReason value) {
  switch (value) {
    case OffCpuReason::kSleep:
      return "sleep";
    case OffCpuReason::kUninterruptible:
      return "uninterruptible";
    case OffCpuReason::kPreempted:
      return "preempted";
    case OffCpuReason::kOther:
      break;
  }
  return "other";
}

std::string_view EnumName(MetricRangeKind value) {
  switch (value) {
    case MetricRangeKind::kKernel:
      return "kernel";
    case MetricRangeKind::kNvtx:
      return "nvtx";
    case MetricRangeKind::kWindow:
      return "window";
    case MetricRangeKind::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view EnumName(PowerSource value) {
  switch (value) {
    case PowerSource::kInstant:
      return "instant";
    case PowerSource::kAveraged:
      return "averaged";
    case PowerSource::kNone:
      break;
  }
  return "none";
}

}  // namespace gpuperf
