// Field numbers and enum values of Perfetto's trace schema that gpuperf writes, from
// protos/perfetto/trace/perfetto_trace.proto and the GPU extensions next to it
// (protos/perfetto/trace/gpu/gpu_interned_data.proto, gpu_track_event.proto).
// tests/proto/perfetto_min.proto declares the same subset for decoding in tests.
#pragma once

#include <cstdint>

namespace gpuperf::perfetto_fields {

namespace trace {
constexpr uint32_t kPacket = 1;
}
namespace packet {
constexpr uint32_t kClockSnapshot = 6;
constexpr uint32_t kTimestamp = 8;
constexpr uint32_t kTrustedPacketSequenceId = 10;
constexpr uint32_t kTrackEvent = 11;
constexpr uint32_t kInternedData = 12;
constexpr uint32_t kSequenceFlags = 13;
constexpr uint32_t kGpuCounterEvent = 52;
constexpr uint32_t kGpuRenderStageEvent = 53;
constexpr uint32_t kTimestampClockId = 58;
constexpr uint32_t kTracePacketDefaults = 59;
constexpr uint32_t kTrackDescriptor = 60;
constexpr uint32_t kZstdCompressedPackets = 133;
constexpr uint32_t kSeqIncrementalStateCleared = 1;
}  // namespace packet
namespace defaults {
constexpr uint32_t kTrackEventDefaults = 11;
constexpr uint32_t kTimestampClockId = 58;
constexpr uint32_t kTrackUuid = 11;  // in TrackEventDefaults
}  // namespace defaults
namespace clock {
constexpr uint32_t kClocks = 1;
constexpr uint32_t kPrimaryTraceClock = 2;
constexpr uint32_t kClockId = 1;
constexpr uint32_t kTimestamp = 2;
constexpr uint32_t kIsIncremental = 3;
constexpr uint32_t kBuiltinRealtime = 1;
constexpr uint32_t kBuiltinMonotonic = 3;
// Clock ids 64..127 are scoped to one packet sequence; each of ours has this one, whose
// timestamps are deltas from the packet before.
constexpr uint32_t kSequenceIncremental = 64;
}  // namespace clock
namespace event {
constexpr uint32_t kCategoryIids = 3;
constexpr uint32_t kDebugAnnotations = 4;
constexpr uint32_t kType = 9;
constexpr uint32_t kNameIid = 10;
constexpr uint32_t kCallstackIid = 56;
constexpr uint32_t kGpuCorrelation = 3000;  // extension: GpuTrackEvent.gpu_correlation
constexpr uint32_t kTypeSliceBegin = 1;
constexpr uint32_t kTypeSliceEnd = 2;
constexpr uint32_t kTypeInstant = 3;
}  // namespace event
namespace gpu_correlation {
constexpr uint32_t kSubmissionEventIds = 1;
}
namespace annotation {
constexpr uint32_t kNameIid = 1;
constexpr uint32_t kUintValue = 3;
constexpr uint32_t kDoubleValue = 5;
constexpr uint32_t kStringValue = 6;
constexpr uint32_t kStringValueIid = 17;
}  // namespace annotation
namespace interned {
constexpr uint32_t kEventCategories = 1;
constexpr uint32_t kEventNames = 2;
constexpr uint32_t kDebugAnnotationNames = 3;
constexpr uint32_t kFunctionNames = 5;
constexpr uint32_t kFrames = 6;
constexpr uint32_t kCallstacks = 7;
constexpr uint32_t kSourcePaths = 18;
constexpr uint32_t kGraphicsContexts = 23;
constexpr uint32_t kGpuSpecifications = 24;
constexpr uint32_t kDebugAnnotationStringValues = 29;
constexpr uint32_t kGpuCounterDescriptors = 47;
constexpr uint32_t kComputeKernels = 1000;   // extension: GpuInternedData.compute_kernels
constexpr uint32_t kComputeArgNames = 1001;  // extension: GpuInternedData.compute_arg_names
constexpr uint32_t kIid = 1;                 // in every interned message
constexpr uint32_t kNameOrStr = 2;           // name (EventName, ...) or str (InternedString)
}  // namespace interned
namespace frame {
constexpr uint32_t kFunctionNameId = 2;
constexpr uint32_t kSourcePathIid = 5;
constexpr uint32_t kLineNumber = 6;
}  // namespace frame
namespace callstack {
constexpr uint32_t kFrameIds = 2;
}
namespace context {
constexpr uint32_t kPid = 2;
constexpr uint32_t kApi = 3;
constexpr uint32_t kApiCuda = 4;
}  // namespace context
namespace spec {  // InternedGpuRenderStageSpecification
constexpr uint32_t kName = 2;
constexpr uint32_t kDescription = 3;
constexpr uint32_t kCategory = 4;
constexpr uint32_t kCategoryOther = 0;
constexpr uint32_t kCategoryCompute = 2;
}  // namespace spec
namespace kernel {  // InternedComputeKernel
constexpr uint32_t kName = 2;
constexpr uint32_t kDemangledName = 3;
constexpr uint32_t kArgs = 5;
}  // namespace kernel
namespace stage {  // GpuRenderStageEvent
constexpr uint32_t kEventId = 1;
constexpr uint32_t kDuration = 2;
constexpr uint32_t kContext = 5;
constexpr uint32_t kGpuId = 11;
constexpr uint32_t kHwQueueIid = 13;
constexpr uint32_t kStageIid = 14;
constexpr uint32_t kKernelIid = 19;
constexpr uint32_t kNameIid = 20;
constexpr uint32_t kLaunch = 21;
}  // namespace stage
namespace launch {  // GpuRenderStageEvent.ComputeKernelLaunch
constexpr uint32_t kGridSize = 1;
constexpr uint32_t kWorkgroupSize = 2;
constexpr uint32_t kArgs = 3;
constexpr uint32_t kX = 1;  // in Dim3
constexpr uint32_t kY = 2;
constexpr uint32_t kZ = 3;
}  // namespace launch
namespace compute_arg {  // GpuRenderStageEvent.ExtraComputeArg
constexpr uint32_t kNameIid = 1;
constexpr uint32_t kUintValue = 4;
constexpr uint32_t kDoubleValue = 5;
constexpr uint32_t kStringValue = 6;
constexpr uint32_t kStringValueIid = 7;
}  // namespace compute_arg
namespace counter {  // GpuCounterEvent, InternedGpuCounterDescriptor, GpuCounterDescriptor
constexpr uint32_t kCounters = 2;
constexpr uint32_t kDescriptorIid = 4;
constexpr uint32_t kCounterId = 1;  // in GpuCounter and GpuCounterSpec
constexpr uint32_t kIntValue = 2;
constexpr uint32_t kDoubleValue = 3;
constexpr uint32_t kInternedDescriptor = 2;  // InternedGpuCounterDescriptor.counter_descriptor
constexpr uint32_t kInternedGpuId = 3;
constexpr uint32_t kSpecs = 1;
constexpr uint32_t kSpecName = 2;
constexpr uint32_t kSpecDescription = 3;
constexpr uint32_t kSpecNumeratorUnits = 7;
constexpr uint32_t kSpecValueDirection = 11;
constexpr uint32_t kUnitByte = 7;
constexpr uint32_t kUnitPercent = 37;
constexpr uint32_t kForwardsLooking = 2;
}  // namespace counter
namespace track {
constexpr uint32_t kUuid = 1;
constexpr uint32_t kName = 2;
constexpr uint32_t kProcess = 3;
constexpr uint32_t kThread = 4;
constexpr uint32_t kParentUuid = 5;
constexpr uint32_t kChildOrdering = 11;
constexpr uint32_t kSiblingOrderRank = 12;
constexpr uint32_t kChildOrderingExplicit = 3;
constexpr uint32_t kProcessPid = 1;
constexpr uint32_t kProcessName = 6;
constexpr uint32_t kThreadPid = 1;
constexpr uint32_t kThreadTid = 2;
constexpr uint32_t kThreadName = 5;
}  // namespace track

}  // namespace gpuperf::perfetto_fields
