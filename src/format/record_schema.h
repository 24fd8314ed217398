// The field list of every fixed-size record type, with how each field is encoded.
// One list drives the encoder, the decoder, id remapping and the text dump, so a new
// field is added in exactly one place (and the format version bumped).
#pragma once

#include <bit>
#include <type_traits>

#include "gpuperf/records.h"

namespace gpuperf::format {

enum class FieldEnc {
  kPlain,   // varint of the value
  kDelta,   // zigzag varint of the difference to the same field of the previous record
  kAfter,   // zigzag varint of the difference to the previous field of the same record
  kString,  // a StringId (remapped across files)
  kStack,   // a StackId (remapped across files)
};

// A field's encoding reaches the visitor as a compile-time constant that converts to
// FieldEnc: a visitor taking `auto enc` can branch on it with `if constexpr`.
template <FieldEnc kEnc>
using FieldEncTag = std::integral_constant<FieldEnc, kEnc>;

#define GP_FIELD(field, enc) visit(#field, record.field, FieldEncTag<FieldEnc::enc>{});

// Defines ForEachField(record, visit) for one record type, const and non-const.
#define GP_DEFINE_SCHEMA(Type, FIELDS)                  \
  template <class R, class V>                           \
  requires std::is_same_v<std::remove_const_t<R>, Type> \
  void ForEachField(R& record, V&& visit) {             \
    FIELDS(GP_FIELD)                                    \
  }

// The field tables below are laid out by hand, one record type per block.
// clang-format off
#define GP_PROCESS_FIELDS(F)                                                                 \
  F(pid, kPlain)                                                                             \
  F(parent_pid, kPlain) F(command, kString) F(hostname, kString) F(gpuperf_version, kString) \
      F(start_ns, kPlain) F(end_ns, kPlain)
GP_DEFINE_SCHEMA(ProcessRecord, GP_PROCESS_FIELDS)

#define GP_THREAD_FIELDS(F) F(pid, kPlain) F(tid, kPlain) F(name, kString)
GP_DEFINE_SCHEMA(ThreadRecord, GP_THREAD_FIELDS)

#define GP_DEVICE_FIELDS(F)                                                               \
  F(pid, kPlain)                                                                          \
  F(device_id, kPlain) F(name, kString) F(compute_major, kPlain) F(compute_minor, kPlain) \
      F(sm_count, kPlain) F(warp_size, kPlain) F(max_threads_per_block, kPlain)           \
          F(max_warps_per_sm, kPlain) F(max_blocks_per_sm, kPlain)                        \
              F(max_registers_per_block, kPlain) F(max_registers_per_sm, kPlain)          \
                  F(max_shared_per_block, kPlain) F(max_shared_per_sm, kPlain)            \
                      F(global_memory_bytes, kPlain) F(memory_bandwidth_kbps, kPlain)     \
                          F(core_clock_khz, kPlain)
GP_DEFINE_SCHEMA(DeviceRecord, GP_DEVICE_FIELDS)

#define GP_CONTEXT_FIELDS(F) \
  F(pid, kPlain)             \
  F(context_id, kPlain) F(device_id, kPlain) F(null_stream_id, kPlain) F(is_green, kPlain)
GP_DEFINE_SCHEMA(ContextRecord, GP_CONTEXT_FIELDS)

#define GP_KERNEL_FIELDS(F)                                                                       \
  F(pid, kPlain)                                                                                  \
  F(name, kString) F(device_id, kPlain) F(context_id, kPlain) F(stream_id, kPlain)                \
      F(start_ns, kDelta) F(end_ns, kAfter) F(grid_x, kPlain) F(grid_y, kPlain) F(grid_z, kPlain) \
          F(block_x, kPlain) F(block_y, kPlain) F(block_z, kPlain) F(cluster_x, kPlain)           \
              F(cluster_y, kPlain) F(cluster_z, kPlain) F(registers_per_thread, kPlain)           \
                  F(static_shared_bytes, kPlain) F(dynamic_shared_bytes, kPlain)                  \
                      F(correlation_id, kDelta) F(graph_id, kPlain) F(graph_node_id, kDelta)      \
                          F(device_launched, kPlain)
GP_DEFINE_SCHEMA(KernelRecord, GP_KERNEL_FIELDS)

#define GP_MEMCPY_FIELDS(F)                                                                        \
  F(pid, kPlain)                                                                                   \
  F(kind, kPlain) F(src_kind, kPlain) F(dst_kind, kPlain) F(bytes, kPlain) F(device_id, kPlain)    \
      F(context_id, kPlain) F(stream_id, kPlain) F(src_device_id, kPlain) F(dst_device_id, kPlain) \
          F(start_ns, kDelta) F(end_ns, kAfter) F(correlation_id, kDelta)                          \
              F(runtime_correlation_id, kDelta) F(graph_id, kPlain) F(graph_node_id, kDelta)
GP_DEFINE_SCHEMA(MemcpyRecord, GP_MEMCPY_FIELDS)

#define GP_MEMSET_FIELDS(F)                                                            \
  F(pid, kPlain)                                                                       \
  F(bytes, kPlain) F(value, kPlain) F(memory_kind, kPlain) F(device_id, kPlain)        \
      F(context_id, kPlain) F(stream_id, kPlain) F(start_ns, kDelta) F(end_ns, kAfter) \
          F(correlation_id, kDelta) F(graph_id, kPlain) F(graph_node_id, kDelta)
GP_DEFINE_SCHEMA(MemsetRecord, GP_MEMSET_FIELDS)

#define GP_API_FIELDS(F)                                                                       \
  F(pid, kPlain)                                                                               \
  F(tid, kPlain) F(domain, kPlain) F(callback_id, kPlain) F(name, kString) F(start_ns, kDelta) \
      F(end_ns, kAfter) F(correlation_id, kDelta) F(return_code, kPlain)
GP_DEFINE_SCHEMA(ApiRecord, GP_API_FIELDS)

#define GP_SYNC_FIELDS(F)                                                                       \
  F(pid, kPlain)                                                                                \
  F(tid, kPlain) F(kind, kPlain) F(context_id, kPlain) F(stream_id, kPlain) F(event_id, kPlain) \
      F(start_ns, kDelta) F(end_ns, kAfter) F(correlation_id, kDelta)
GP_DEFINE_SCHEMA(SyncRecord, GP_SYNC_FIELDS)

#define GP_MEMORY_FIELDS(F)                                                                        \
  F(pid, kPlain)                                                                                   \
  F(op, kPlain) F(memory_kind, kPlain) F(address, kDelta) F(bytes, kPlain) F(device_id, kPlain)    \
      F(context_id, kPlain) F(stream_id, kPlain) F(timestamp_ns, kDelta) F(correlation_id, kDelta) \
          F(is_async, kPlain)
GP_DEFINE_SCHEMA(MemoryRecord, GP_MEMORY_FIELDS)

#define GP_NVTX_FIELDS(F)                                                                \
  F(pid, kPlain)                                                                         \
  F(tid, kPlain) F(kind, kPlain) F(name, kString) F(domain, kString) F(start_ns, kDelta) \
      F(end_ns, kAfter) F(color, kPlain)
GP_DEFINE_SCHEMA(NvtxRecord, GP_NVTX_FIELDS)

#define GP_OVERHEAD_FIELDS(F) \
  F(pid, kPlain) F(tid, kPlain) F(kind, kPlain) F(start_ns, kDelta) F(end_ns, kAfter)
GP_DEFINE_SCHEMA(OverheadRecord, GP_OVERHEAD_FIELDS)

#define GP_LAUNCH_LINK_FIELDS(F) \
  F(pid, kPlain) F(tid, kPlain) F(correlation_id, kDelta) F(stack_id, kStack) \
  F(api_name, kString) F(timestamp_ns, kDelta)
GP_DEFINE_SCHEMA(LaunchLinkRecord, GP_LAUNCH_LINK_FIELDS)

#define GP_EXTERNAL_CORRELATION_FIELDS(F) \
  F(pid, kPlain) F(external_kind, kPlain) F(external_id, kDelta) F(correlation_id, kDelta)
GP_DEFINE_SCHEMA(ExternalCorrelationRecord, GP_EXTERNAL_CORRELATION_FIELDS)

#define GP_CLOCK_FIELDS(F) F(pid, kPlain) F(monotonic_ns, kDelta) F(realtime_ns, kAfter)
GP_DEFINE_SCHEMA(ClockRecord, GP_CLOCK_FIELDS)

#define GP_STAT_FIELDS(F) F(pid, kPlain) F(stat, kPlain) F(value, kPlain)
GP_DEFINE_SCHEMA(StatRecord, GP_STAT_FIELDS)

#define GP_MODULE_FIELDS(F) \
  F(pid, kPlain)            \
  F(path, kString) F(build_id, kString) F(load_bias, kPlain) F(start, kPlain) F(end, kAfter)
GP_DEFINE_SCHEMA(ModuleRecord, GP_MODULE_FIELDS)

#define GP_CPU_SAMPLE_FIELDS(F) \
  F(pid, kPlain) F(tid, kPlain) F(timestamp_ns, kDelta) F(stack_id, kStack) F(cpu, kPlain) \
  F(weight_ns, kPlain)
GP_DEFINE_SCHEMA(CpuSampleRecord, GP_CPU_SAMPLE_FIELDS)

#define GP_OFF_CPU_FIELDS(F) \
  F(pid, kPlain) F(tid, kPlain) F(start_ns, kDelta) F(end_ns, kAfter) F(blocked_ns, kPlain) \
  F(count, kPlain) F(stack_id, kStack) F(reason, kPlain)
GP_DEFINE_SCHEMA(OffCpuRecord, GP_OFF_CPU_FIELDS)

#define GP_METRIC_RANGE_FIELDS(F)                                                           \
  F(pid, kPlain)                                                                            \
  F(range_id, kDelta) F(kind, kPlain) F(name, kString) F(metric_set, kString)               \
      F(device_id, kPlain) F(context_id, kPlain) F(correlation_id, kDelta) F(start_ns, kDelta) \
          F(end_ns, kAfter) F(passes, kPlain) F(serialized, kPlain)
GP_DEFINE_SCHEMA(MetricRangeRecord, GP_METRIC_RANGE_FIELDS)

#define GP_METRIC_VALUE_FIELDS(F) \
  F(pid, kPlain) F(range_id, kDelta) F(metric, kString) F(value, kPlain)
GP_DEFINE_SCHEMA(MetricValueRecord, GP_METRIC_VALUE_FIELDS)

#define GP_RANK_FIELDS(F)                                                                   \
  F(pid, kPlain)                                                                            \
  F(rank, kPlain) F(local_rank, kPlain) F(world_size, kPlain) F(local_world_size, kPlain)   \
      F(node_rank, kPlain) F(launcher, kString) F(job_id, kString) F(master, kString)       \
          F(boot_id, kString) F(visible_devices, kString)
GP_DEFINE_SCHEMA(RankRecord, GP_RANK_FIELDS)

#define GP_POWER_SAMPLE_FIELDS(F)                                                         \
  F(pid, kPlain)                                                                          \
  F(device_id, kPlain) F(timestamp_ns, kDelta) F(power_mw, kPlain) F(energy_mj, kPlain)   \
      F(source, kPlain)
GP_DEFINE_SCHEMA(PowerSampleRecord, GP_POWER_SAMPLE_FIELDS)

#define GP_NCCL_COLLECTIVE_FIELDS(F)                                                            \
  F(pid, kPlain)                                                                                \
  F(tid, kPlain) F(comm_hash, kPlain) F(rank, kPlain) F(nranks, kPlain) F(seq, kDelta)          \
      F(func, kString) F(count, kPlain) F(type_size, kPlain) F(datatype, kString) F(root, kPlain) \
          F(algorithm, kString) F(protocol, kString) F(channels, kPlain) F(start_ns, kDelta)    \
              F(end_ns, kDelta)
GP_DEFINE_SCHEMA(NcclCollectiveRecord, GP_NCCL_COLLECTIVE_FIELDS)

#define GP_NCCL_COMM_FIELDS(F)                                                             \
  F(pid, kPlain)                                                                           \
  F(comm_hash, kPlain) F(name, kString) F(rank, kPlain) F(nranks, kPlain) F(nnodes, kPlain) \
      F(plugin_version, kPlain) F(timestamp_ns, kDelta)
GP_DEFINE_SCHEMA(NcclCommRecord, GP_NCCL_COMM_FIELDS)
// clang-format on

// Field values travel through the codec as uint64; signed fields zigzag so that small
// negative numbers (error codes) stay small; doubles travel as their bits.
template <class T>
uint64_t FieldToU64(T value) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::bit_cast<uint64_t>(static_cast<double>(value));  // exact, never rounded
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<uint64_t>(value);
  } else if constexpr (std::is_signed_v<T>) {
    return (static_cast<uint64_t>(static_cast<int64_t>(value)) << 1) ^
           static_cast<uint64_t>(static_cast<int64_t>(value) >> 63);
  } else {
    return static_cast<uint64_t>(value);
  }
}

template <class T>
T FieldFromU64(uint64_t value) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::bit_cast<double>(value));
  } else if constexpr (std::is_enum_v<T>) {
    return static_cast<T>(value);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1));
  } else {
    return static_cast<T>(value);
  }
}

}  // namespace gpuperf::format
