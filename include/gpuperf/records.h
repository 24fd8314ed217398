// The records of a gpuperf trace: plain structs, no behaviour.
//
// Every id that names a string (kernel name, API name, path, ...) is a StringId into
// the trace's string table; every call stack is a StackId into its stack table.
// Id 0 means "none" for both. Timestamps are CLOCK_MONOTONIC nanoseconds of the
// recording host. Enumerations mirror CUPTI's numbering where CUPTI has one, so the
// translation at the edge stays a cast that tests can check.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuperf {

using StringId = uint32_t;
using StackId = uint32_t;

enum class ApiDomain : uint8_t { kUnknown = 0, kRuntime = 1, kDriver = 2, kInternal = 3 };

// Same values as CUpti_ActivityMemcpyKind.
enum class MemcpyKind : uint8_t {
  kUnknown = 0,
  kHtoD = 1,
  kDtoH = 2,
  kHtoA = 3,
  kAtoH = 4,
  kAtoA = 5,
  kAtoD = 6,
  kDtoA = 7,
  kDtoD = 8,
  kHtoH = 9,
  kPtoP = 10,
};

// Same values as CUpti_ActivityMemoryKind.
enum class MemoryKind : uint8_t {
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
  kDeviceStatic = 6,
  kManagedStatic = 7,
};

// Same values as CUpti_ActivitySynchronizationType.
enum class SyncKind : uint8_t {
  kUnknown = 0,
  kEventSynchronize = 1,
  kStreamWaitEvent = 2,
  kStreamSynchronize = 3,
  kContextSynchronize = 4,
};

// Same values as CUpti_ActivityMemoryOperationType.
enum class MemoryOp : uint8_t { kUnknown = 0, kAllocation = 1, kRelease = 2 };

enum class NvtxKind : uint8_t { kRange = 1, kMark = 2 };

// Our own grouping of CUpti_ActivityOverheadKind (whose values are sparse bit fields).
enum class OverheadKind : uint8_t {
  kUnknown = 0,
  kDriverCompiler = 1,
  kBufferFlush = 2,
  kInstrumentation = 3,
  kResource = 4,
  kModuleLoading = 5,
  kLazyFunctionLoading = 6,
  kCommandBufferFull = 7,
  kActivityBufferRequest = 8,
  kUvmActivityInit = 9,
};

// One per recorded process (one per trace file).
struct ProcessRecord {
  uint32_t pid = 0;
  uint32_t parent_pid = 0;
  StringId command = 0;  // argv joined by spaces
  StringId hostname = 0;
  StringId gpuperf_version = 0;
  uint64_t start_ns = 0;  // when the injection library initialized
  uint64_t end_ns = 0;    // last flush; 0 when the process died before its final flush
};

struct ThreadRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;  // gettid() value, as CUPTI reports with CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM
  StringId name = 0;
};

// The device limits that theoretical occupancy needs, plus identity.
struct DeviceRecord {
  uint32_t pid = 0;
  uint32_t device_id = 0;
  StringId name = 0;
  uint32_t compute_major = 0;
  uint32_t compute_minor = 0;
  uint32_t sm_count = 0;
  uint32_t warp_size = 0;
  uint32_t max_threads_per_block = 0;
  uint32_t max_warps_per_sm = 0;
  uint32_t max_blocks_per_sm = 0;
  uint32_t max_registers_per_block = 0;
  uint32_t max_registers_per_sm = 0;
  uint32_t max_shared_per_block = 0;  // bytes
  uint32_t max_shared_per_sm = 0;     // bytes
  uint64_t global_memory_bytes = 0;
  uint64_t memory_bandwidth_kbps = 0;  // KB/s as CUPTI reports it
  uint32_t core_clock_khz = 0;
};

struct ContextRecord {
  uint32_t pid = 0;
  uint32_t context_id = 0;
  uint32_t device_id = 0;
  uint32_t null_stream_id = 0;
  uint8_t is_green = 0;
};

struct KernelRecord {
  uint32_t pid = 0;
  StringId name = 0;  // mangled, as CUPTI reports it; analysis demangles
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t grid_x = 0, grid_y = 0, grid_z = 0;
  uint32_t block_x = 0, block_y = 0, block_z = 0;
  uint32_t cluster_x = 0, cluster_y = 0, cluster_z = 0;
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_bytes = 0;
  uint32_t correlation_id = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
  uint8_t device_launched = 0;
};

struct MemcpyRecord {
  uint32_t pid = 0;
  MemcpyKind kind = MemcpyKind::kUnknown;
  MemoryKind src_kind = MemoryKind::kUnknown;
  MemoryKind dst_kind = MemoryKind::kUnknown;
  uint64_t bytes = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint32_t src_device_id = 0;  // peer-to-peer copies only
  uint32_t dst_device_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t correlation_id = 0;
  uint32_t runtime_correlation_id = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
};

struct MemsetRecord {
  uint32_t pid = 0;
  uint64_t bytes = 0;
  uint32_t value = 0;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t correlation_id = 0;
  uint32_t graph_id = 0;
  uint64_t graph_node_id = 0;
};

struct ApiRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;
  ApiDomain domain = ApiDomain::kUnknown;
  uint32_t callback_id = 0;  // CUPTI cbid within the domain
  StringId name = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t correlation_id = 0;
  int32_t return_code = 0;  // cudaError_t or CUresult
};

struct SyncRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;  // from the API record of the same correlation id, when known
  SyncKind kind = SyncKind::kUnknown;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;  // UINT32_MAX when not applicable, as CUPTI does
  uint32_t event_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t correlation_id = 0;
};

struct MemoryRecord {
  uint32_t pid = 0;
  MemoryOp op = MemoryOp::kUnknown;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint64_t timestamp_ns = 0;
  uint32_t correlation_id = 0;
  uint8_t is_async = 0;  // stream-ordered (cudaMallocAsync) allocation
};

struct NvtxRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;
  NvtxKind kind = NvtxKind::kRange;
  StringId name = 0;
  StringId domain = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;  // equals start_ns for a mark; 0 when the range never ended
  uint32_t color = 0;
};

struct OverheadRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;
  OverheadKind kind = OverheadKind::kUnknown;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

// The CPU stack that issued the API call with this correlation id.
// Nested calls (a runtime launch calling a driver launch) each get a link to the stack of
// the outermost call, so a kernel finds its stack whichever correlation id it carries.
struct LaunchLinkRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t correlation_id = 0;
  StackId stack_id = 0;       // 0 when the stack could not be taken (counted in stats)
  StringId api_name = 0;      // the outermost API, e.g. "cudaLaunchKernel"
  uint64_t timestamp_ns = 0;  // API enter
};

struct ExternalCorrelationRecord {
  uint32_t pid = 0;
  uint32_t external_kind = 0;  // CUpti_ExternalCorrelationKind
  uint64_t external_id = 0;
  uint32_t correlation_id = 0;
};

// A pair of clock readings taken at the same moment, so traces can be aligned with
// wall-clock time and with tools that use another clock.
struct ClockRecord {
  uint32_t pid = 0;
  uint64_t monotonic_ns = 0;
  uint64_t realtime_ns = 0;
};

// A counter from the stats table (include/gpuperf/stats.h): drops and our own costs.
struct StatRecord {
  uint32_t pid = 0;
  uint32_t stat = 0;  // StatId
  uint64_t value = 0;
};

// One loaded ELF object of a recorded process.
struct ModuleRecord {
  uint32_t pid = 0;
  StringId path = 0;
  StringId build_id = 0;  // hex
  uint64_t load_bias = 0;
  uint64_t start = 0;  // lowest mapped address of its PT_LOAD segments
  uint64_t end = 0;    // one past the highest
};

// An interned call stack: program counters, innermost first, then the launching thread's
// Python frames as tagged words (gpuperf/python_frame_word.h), innermost first.
struct StackRecord {
  uint32_t pid = 0;
  StackId id = 0;
  std::vector<uint64_t> pcs;
};

struct SymbolFrame {
  StringId function = 0;  // demangled; 0 when unknown
  StringId file = 0;
  uint32_t line = 0;
  StringId module = 0;
  uint64_t module_offset = 0;
};

// What a PC of a process resolved to. frames[0] is the innermost inlined function,
// the last frame the real (outlined) function that contains the PC.
struct SymbolRecord {
  uint32_t pid = 0;
  uint64_t pc = 0;
  std::vector<SymbolFrame> frames;
};

// A CPython code object that Python frames of the same process's stacks name by code_id:
// what the recorder copied of it the first time it was seen, so lines are resolved
// offline (cpython/python_lines.h). Variable length: a chunk type of its own.
struct PythonCodeRecord {
  uint32_t pid = 0;
  uint32_t code_id = 0;         // 1-based, per process
  StringId name = 0;            // qualified name (co_qualname; co_name on 3.10)
  StringId file = 0;            // co_filename
  int32_t first_line = 0;       // co_firstlineno
  uint32_t python_version = 0;  // (major << 24) | (minor << 16)
  uint8_t line_format = 0;      // PyLineTableFormat: 0 none, 1 CPython 3.10, 2 3.11 and later
  uint32_t code_units = 0;      // bytecode length in 16-bit code units
  std::string line_table;       // raw co_linetable bytes
  // 3.11+ _co_firsttraceable, for dropping incomplete frames (python_lines.h); 0 in traces
  // from before it was recorded (their walker dropped them itself).
  uint32_t first_traceable = 0;
};

// Why a thread was off CPU: its scheduler state when it switched out.
enum class OffCpuReason : uint8_t {
  kOther = 0,
  kSleep = 1,            // interruptible sleep: waits on a lock, a condition, I/O, a timer
  kUninterruptible = 2,  // uninterruptible: disk I/O, page faults, some kernel locks
  kPreempted = 3,        // runnable but descheduled: waited for a CPU
};

// A timer sample of a running thread (`gpuperf record --cpu`): its stack, kernel frames
// first (gpuperf/kernel_frame_word.h), then user frames, innermost first, stands for
// weight_ns of CPU time.
struct CpuSampleRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t timestamp_ns = 0;
  StackId stack_id = 0;  // 0 when no stack could be taken
  uint32_t cpu = 0;
  uint64_t weight_ns = 0;
};

// Time a thread spent off CPU (`gpuperf record --off-cpu`): `count` intervals between
// start_ns and end_ns at the same stack (taken where it switched out) for the same
// reason, blocked_ns in all (the on-CPU time between them not included).
struct OffCpuRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint64_t blocked_ns = 0;
  uint32_t count = 0;
  StackId stack_id = 0;  // 0 when no stack could be taken
  OffCpuReason reason = OffCpuReason::kOther;
};

// ---- Hardware metrics: `gpuperf metrics` (docs/hardware-metrics.md) ----

// What a metric range covers.
enum class MetricRangeKind : uint8_t { kUnknown = 0, kKernel = 1, kNvtx = 2, kWindow = 3 };

// One range CUPTI's range profiler measured: one kernel launch (kernel replay: the kernel ran
// alone, once per pass, so `serialized` is set and its times are not those of a normal run), or
// one NVTX range or time window (one pass, kernels kept concurrent).
struct MetricRangeRecord {
  uint32_t pid = 0;
  uint32_t range_id = 0;  // 1-based, per process; MetricValueRecord names it
  MetricRangeKind kind = MetricRangeKind::kUnknown;
  StringId name = 0;        // the kernel (mangled) or the range's name
  StringId metric_set = 0;  // "basic", "memory", ...
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t correlation_id = 0;  // kernels: the launch's (links its launch stack); else 0
  uint64_t start_ns = 0;        // CPU clock: launch enter, range push
  uint64_t end_ns = 0;          // launch exit (replay included), range pop
  uint32_t passes = 0;          // hardware passes the metric set needed
  uint8_t serialized = 0;       // kernels ran one at a time (replay): times are not comparable
};

// One metric of one range, as CUPTI evaluated it (units: the metric's own, e.g. percent,
// byte/second, nanosecond).
struct MetricValueRecord {
  uint32_t pid = 0;
  uint32_t range_id = 0;
  StringId metric = 0;  // CUPTI's metric name, e.g. "dram__bytes.sum.per_second"
  double value = 0;
};

// ---- PC sampling: `gpuperf record --pc-sampling` (variable length: chunk type 35) ----

struct PcStallCount {
  StringId reason = 0;  // CUPTI's stall reason name, e.g. "smsp__pcsamp_warps_issue_stalled_..."
  uint64_t samples = 0;
};

// The samples of one instruction since the previous record of it (readers add them up).
struct PcSampleRecord {
  uint32_t pid = 0;
  uint64_t cubin_crc = 0;       // CUPTI's CRC of the module's cubin (CubinRecord names its file)
  StringId function = 0;        // mangled
  uint64_t pc_offset = 0;       // from the start of the function
  uint32_t correlation_id = 0;  // 0 in continuous mode (kernels not serialized)
  std::vector<PcStallCount> stalls;
};

// A module the process loaded, saved as <trace dir>/<file> (named by its CRC).
struct CubinRecord {
  uint32_t pid = 0;
  uint64_t crc = 0;
  uint64_t bytes = 0;
  StringId file = 0;  // relative to the trace's directory, e.g. "cubins/1a2b3c4d5e6f7a8b.cubin"
};

// Where an instruction of a sampled function comes from, written by `record` after the run from
// the saved cubin: its DWARF line table (kernels built with -lineinfo) and, where nvdisasm was
// found, the instruction's SASS text. line 0: no line information.
struct SassLineRecord {
  uint64_t cubin_crc = 0;
  StringId function = 0;
  uint64_t pc_offset = 0;
  StringId file = 0;  // directory and name as the compiler recorded them
  uint32_t line = 0;
  StringId instruction = 0;  // "FFMA R4, R2, R3, R4" (0: not disassembled)
};

// Who a process was in a distributed job, from what its launcher put in the environment
// (torchrun, Slurm, Open MPI, MPICH/PMI; docs/multi-rank.md), and which host clock its
// timestamps use. One per process, written at start.
struct RankRecord {
  uint32_t pid = 0;
  int32_t rank = -1;  // global rank; -1: the environment named none (not a rank)
  int32_t local_rank = -1;
  int32_t world_size = -1;
  int32_t local_world_size = -1;
  int32_t node_rank = -1;        // GROUP_RANK, SLURM_NODEID, ...
  StringId launcher = 0;         // "torchrun", "slurm", "openmpi", "pmi", "env"
  StringId job_id = 0;           // TORCHELASTIC_RUN_ID, SLURM_JOB_ID, ...
  StringId master = 0;           // MASTER_ADDR:MASTER_PORT when set
  StringId boot_id = 0;          // /proc/sys/kernel/random/boot_id: one CLOCK_MONOTONIC per boot
  StringId visible_devices = 0;  // CUDA_VISIBLE_DEVICES as the process saw it
};

// Where a power reading came from.
enum class PowerSource : uint8_t {
  kNone = 0,      // no power reading (an energy-counter reading alone)
  kInstant = 1,   // NVML_FI_DEV_POWER_INSTANT
  kAveraged = 2,  // nvmlDeviceGetPowerUsage (a trailing average on recent GPUs)
};

// One NVML reading of a device's board power, and of its energy counter when taken
// (the counter is read at the start, about once a second, and at the end).
struct PowerSampleRecord {
  uint32_t pid = 0;
  uint32_t device_id = 0;  // the CUDA device of the process, as in KernelRecord
  uint64_t timestamp_ns = 0;
  uint32_t power_mw = 0;
  uint64_t energy_mj = 0;  // NVML total energy since the driver loaded; 0: not read
  PowerSource source = PowerSource::kNone;
};

// ---- NCCL's profiler plugin (src/inject/nccl, docs/multi-rank.md) ----

// One collective as NCCL planned it on this rank (NCCL's "Coll" profiler event): NCCL starts
// and stops the event on the thread that launched the collective's kernel, just after the
// launch, or on CUDA's host-callback thread for graph-captured plans. Offline, the record is
// joined to that kernel (analyze/ranks/nccl_join.h).
struct NcclCollectiveRecord {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t comm_hash = 0;  // NCCL's communicator id, the same on every rank of the communicator
  int32_t rank = -1;       // this process's rank in the communicator
  int32_t nranks = 0;      // 0: not known (the communicator's init was not seen)
  uint64_t seq = 0;        // NCCL's per-communicator, per-function sequence number
  StringId func = 0;       // "AllReduce", "AllGather", ...
  uint64_t count = 0;      // elements as NCCL planned them
  uint32_t type_size = 0;  // bytes per element (0: a datatype gpuperf does not know)
  StringId datatype = 0;   // "ncclFloat32", ...
  int32_t root = -1;
  StringId algorithm = 0;  // "RING", "TREE", "NVLS", ...
  StringId protocol = 0;   // "LL", "LL128", "SIMPLE"
  uint32_t channels = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

// A communicator NCCL initialized the plugin for (one per communicator and process).
struct NcclCommRecord {
  uint32_t pid = 0;
  uint64_t comm_hash = 0;
  StringId name = 0;  // the user's commName, when set
  int32_t rank = -1;
  int32_t nranks = 0;
  int32_t nnodes = 0;
  uint32_t plugin_version = 0;  // the plugin interface NCCL used: 4 or 5
  uint64_t timestamp_ns = 0;
};

// Every fixed-size record type: X(TypeName, snake_name, plural, chunk type number); the
// plural names the vectors of them (Trace::kernels, Trace::memories).
// Chunk type numbers are part of the file format: never reuse or renumber one.
#define GPUPERF_FIXED_RECORD_TYPES(X)                                     \
  X(Process, process, processes, 1)                                       \
  X(Thread, thread, threads, 2)                                           \
  X(Device, device, devices, 3)                                           \
  X(Context, context, contexts, 4)                                        \
  X(Kernel, kernel, kernels, 5)                                           \
  X(Memcpy, memcpy, memcpys, 6)                                           \
  X(Memset, memset, memsets, 7)                                           \
  X(Api, api, apis, 8)                                                    \
  X(Sync, sync, syncs, 9)                                                 \
  X(Memory, memory, memories, 10)                                         \
  X(Nvtx, nvtx, nvtxs, 11)                                                \
  X(Overhead, overhead, overheads, 12)                                    \
  X(LaunchLink, launch_link, launch_links, 13)                            \
  X(ExternalCorrelation, external_correlation, external_correlations, 14) \
  X(Clock, clock, clocks, 15)                                             \
  X(Stat, stat, stats, 16)                                                \
  X(Module, module, modules, 17)                                          \
  X(CpuSample, cpu_sample, cpu_samples, 18)                               \
  X(OffCpu, off_cpu, off_cpus, 19)                                        \
  X(MetricRange, metric_range, metric_ranges, 20)                         \
  X(MetricValue, metric_value, metric_values, 21)                         \
  X(Rank, rank, ranks, 22)                                                \
  X(PowerSample, power_sample, power_samples, 23)                         \
  X(NcclCollective, nccl_collective, nccl_collectives, 24)                \
  X(NcclComm, nccl_comm, nccl_comms, 25)

}  // namespace gpuperf
