#include "inject/live_recorder.h"

#include <time.h>

#include <cstdlib>

#include "format/live_dir.h"
#include "format/live_text.h"
#include "inject/log.h"
#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// The first of these variables that holds a number; -1 when none does.
int32_t IntFromEnvironment(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') continue;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (*end == '\0' && value >= 0 && value <= INT32_MAX) return static_cast<int32_t>(value);
  }
  return -1;
}

// What the launchers set: torchrun, Open MPI, MPICH/PMI, Slurm.
live::Identity MakeIdentity(const LiveIdentity& in) {
  live::Identity id;
  id.pid = in.pid;
  id.parent_pid = in.parent_pid;
  id.start_ticks = live::ProcessStartTicks(in.pid);
  id.start_monotonic_ns = in.start_monotonic_ns;
  const uint64_t monotonic = ClockNs(CLOCK_MONOTONIC);
  const uint64_t age = monotonic > in.start_monotonic_ns ? monotonic - in.start_monotonic_ns : 0;
  id.start_realtime_ns = ClockNs(CLOCK_REALTIME) - age;
  id.rank = IntFromEnvironment({"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"});
  id.local_rank = IntFromEnvironment(
      {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"});
  id.world_size =
      IntFromEnvironment({"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"});
  live::CopyText(id.host, in.host);
  live::CopyText(id.command, in.command);
  live::CopyText(id.version, GPUPERF_VERSION);
  return id;
}

}  // namespace

void LiveRecorder::Start(const LiveIdentity& identity, NameTable& names) {
  const std::string dir = live::DefaultLiveDir();
  auto file = live::LivePageFile::Create(dir, MakeIdentity(identity));
  if (!file.ok()) {
    CountStat(StatId::live_page_unavailable);
    LogOnce("no live page, gpuperf top/serve will not see this process: %s",
            file.status().message().c_str());
    return;
  }
  file_ = std::move(file).value();
  accumulator_ =
      std::make_unique<live::LiveAccumulator>([&names](StringId id) { return names.TextOf(id); });
}

void LiveRecorder::Fold(const std::deque<std::unique_ptr<RecordBatch>>& batches,
                        const std::vector<ApiRecord>& api_calls) {
  if (!active()) return;
  // CPU time of the writer thread: what the page costs, however busy the machine is.
  const uint64_t start = ClockNs(CLOCK_THREAD_CPUTIME_ID);
  live::LiveAccumulator& a = *accumulator_;
  for (const auto& batch : batches) {
    // Devices first: their names and UUIDs belong to the rows the rest adds to.
    for (const DeviceRecord& device : batch->devices) a.AddDevice(device);
    for (const DeviceUuid& uuid : batch->device_uuids) a.SetDeviceUuid(uuid.device_id, uuid.bytes);
    for (const KernelRecord& kernel : batch->kernels) a.AddKernel(kernel);
    for (const MemcpyRecord& copy : batch->memcpys) a.AddMemcpy(copy);
    for (const MemsetRecord& set : batch->memsets) a.AddMemset(set);
    for (const MemoryRecord& memory : batch->memories) a.AddMemory(memory);
    for (const SyncRecord& sync : batch->syncs) a.AddSync(sync);
    // API records come from CUPTI's activity kinds with GPUPERF_API_SOURCE=cupti.
    for (const ApiRecord& call : batch->apis) a.AddApi(call);
  }
  for (const ApiRecord& call : api_calls) a.AddApi(call);
  CountStat(StatId::live_update_ns, ClockNs(CLOCK_THREAD_CPUTIME_ID) - start);
}

void LiveRecorder::Publish(uint64_t now_ns, bool capturing) {
  if (!active()) return;
  const uint64_t start = ClockNs(CLOCK_THREAD_CPUTIME_ID);
  accumulator_->Publish(file_->page(), now_ns, capturing);
  SetStat(StatId::live_records_left_out, accumulator_->records_left_out());
  CountStat(StatId::live_updates);
  CountStat(StatId::live_update_ns, ClockNs(CLOCK_THREAD_CPUTIME_ID) - start);
  uint64_t values[kStatSlots];
  for (uint32_t id = 0; id < kStatSlots; ++id) {
    values[id] = g_stats[id].load(std::memory_order_relaxed);
  }
  accumulator_->PublishStats(file_->page(), values);
}

void LiveRecorder::Close(uint64_t now_ns, bool capturing) {
  if (!active()) return;
  Publish(now_ns, capturing);
  file_->Remove();
}

}  // namespace gpuperf::inject
