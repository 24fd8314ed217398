#include "analyze/dataset/dataset_schema.h"

namespace gpuperf {
namespace {

constexpr ColumnType I = ColumnType::kInt64;
constexpr ColumnType S = ColumnType::kString;
constexpr bool kNull = true;

// Every table begins with these three.
#define GP_WHO               \
  {"host", S}, {"pid", I}, { \
    "rank", I                \
  }
// How a GPU activity joined its launch (analyze/correlation.h).
#define GP_LAUNCH                                                                            \
  {"join", S}, {"stack_id", I, kNull}, {"launch_api", S, kNull}, {"launch_tid", I, kNull}, { \
    "launch_ns", I, kNull                                                                    \
  }

constexpr ColumnSpec kProcesses[] = {
    GP_WHO,
    {"parent_pid", I},
    {"command", S},
    {"start_ns", I},
    {"end_ns", I, kNull},
    {"clock_offset_ns", I},
    {"trace_file", S},
};
constexpr ColumnSpec kRanks[] = {
    GP_WHO,           {"local_rank", I},      {"world_size", I}, {"local_world_size", I},
    {"node_rank", I}, {"launcher", S},        {"job_id", S},     {"master", S},
    {"boot_id", S},   {"visible_devices", S},
};
constexpr ColumnSpec kDevices[] = {
    GP_WHO,
    {"device", I},
    {"name", S},
    {"compute_major", I},
    {"compute_minor", I},
    {"sm_count", I},
    {"global_memory_bytes", I},
    {"core_clock_khz", I},
};
constexpr ColumnSpec kKernels[] = {
    GP_WHO,
    {"device", I},
    {"context", I},
    {"stream", I},
    {"correlation_id", I},
    {"start_ns", I},
    {"end_ns", I},
    {"duration_ns", I},
    {"name", S},
    {"demangled", S},
    {"short_name", S},
    {"grid_x", I},
    {"grid_y", I},
    {"grid_z", I},
    {"block_x", I},
    {"block_y", I},
    {"block_z", I},
    {"registers_per_thread", I},
    {"static_shared_bytes", I},
    {"dynamic_shared_bytes", I},
    {"graph_id", I},
    {"graph_node_id", I},
    {"communication", S, kNull},
    GP_LAUNCH,
};
constexpr ColumnSpec kMemcpys[] = {
    GP_WHO,          {"device", I}, {"context", I},     {"stream", I},     {"correlation_id", I},
    {"start_ns", I}, {"end_ns", I}, {"duration_ns", I}, {"kind", S},       {"src_kind", S},
    {"dst_kind", S}, {"bytes", I},  {"src_device", I},  {"dst_device", I}, {"graph_id", I},
    GP_LAUNCH,
};
constexpr ColumnSpec kMemsets[] = {
    GP_WHO,          {"device", I},   {"context", I},     {"stream", I},      {"correlation_id", I},
    {"start_ns", I}, {"end_ns", I},   {"duration_ns", I}, {"memory_kind", S}, {"bytes", I},
    {"value", I},    {"graph_id", I}, GP_LAUNCH,
};
constexpr ColumnSpec kApiCalls[] = {
    GP_WHO,          {"tid", I},    {"domain", S},      {"callback_id", I},    {"name", S},
    {"start_ns", I}, {"end_ns", I}, {"duration_ns", I}, {"correlation_id", I}, {"return_code", I},
};
constexpr ColumnSpec kSyncs[] = {
    GP_WHO,          {"tid", I},      {"kind", S},   {"context", I},     {"stream", I, kNull},
    {"event_id", I}, {"start_ns", I}, {"end_ns", I}, {"duration_ns", I}, {"correlation_id", I},
};
constexpr ColumnSpec kAllocations[] = {
    GP_WHO,
    {"operation", S},
    {"memory_kind", S},
    {"address", I},
    {"bytes", I},
    {"device", I},
    {"context", I},
    {"stream", I},
    {"timestamp_ns", I},
    {"correlation_id", I},
    {"is_async", I},
};
constexpr ColumnSpec kNvtxRanges[] = {
    GP_WHO,        {"tid", I},      {"kind", S},          {"name", S},
    {"domain", S}, {"start_ns", I}, {"end_ns", I, kNull}, {"duration_ns", I, kNull},
    {"color", I},
};
constexpr ColumnSpec kCollectives[] = {
    GP_WHO,
    {"device", I},
    {"stream", I},
    {"stream_ordinal", I},
    {"kernel", S},
    {"operation", S},
    {"ordinal", I},
    {"start_ns", I},
    {"end_ns", I},
    {"duration_ns", I},
    {"correlation_id", I},
    {"communicator", S, kNull},
    {"nccl_operation", S, kNull},
    {"sequence", I, kNull},
    {"bytes", I, kNull},
    {"calls", I},
    {"nranks", I, kNull},
    {"algorithm", S, kNull},
};
constexpr ColumnSpec kCpuSamples[] = {
    GP_WHO, {"tid", I}, {"timestamp_ns", I}, {"cpu", I}, {"weight_ns", I}, {"stack_id", I, kNull},
};
constexpr ColumnSpec kOffCpu[] = {
    GP_WHO,       {"tid", I},    {"start_ns", I},        {"end_ns", I}, {"blocked_ns", I},
    {"count", I}, {"reason", S}, {"stack_id", I, kNull},
};
constexpr ColumnSpec kPower[] = {
    GP_WHO,          {"device", I},           {"timestamp_ns", I},
    {"power_mw", I}, {"energy_mj", I, kNull}, {"source", S},
};
constexpr ColumnSpec kStacks[] = {
    GP_WHO,
    {"stack_id", I},
    {"position", I},
    {"frame_id", I},
};
constexpr ColumnSpec kFrames[] = {
    GP_WHO,
    {"frame_id", I},
    {"kind", S},
    {"function", S},
    {"file", S, kNull},
    {"line", I, kNull},
    {"module", S, kNull},
    {"name", S},
};

#undef GP_WHO
#undef GP_LAUNCH

constexpr TableSpec kTables[] = {
    {"processes", kProcesses},     {"ranks", kRanks},
    {"devices", kDevices},         {"kernels", kKernels},
    {"memcpys", kMemcpys},         {"memsets", kMemsets},
    {"api_calls", kApiCalls},      {"syncs", kSyncs},
    {"allocations", kAllocations}, {"nvtx_ranges", kNvtxRanges},
    {"collectives", kCollectives}, {"cpu_samples", kCpuSamples},
    {"off_cpu", kOffCpu},          {"power", kPower},
    {"stacks", kStacks},           {"frames", kFrames},
};
static_assert(std::size(kTables) == kDatasetTableCount);

constexpr std::array<DatasetTable, kDatasetTableCount> kAll = [] {
  std::array<DatasetTable, kDatasetTableCount> all{};
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<DatasetTable>(i);
  return all;
}();

}  // namespace

const TableSpec& DatasetTableSpec(DatasetTable table) {
  return kTables[static_cast<size_t>(table)];
}

std::span<const DatasetTable> AllDatasetTables() {
  return kAll;
}

}  // namespace gpuperf
