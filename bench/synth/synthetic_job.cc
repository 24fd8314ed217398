#include "synth/synthetic_job.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "gpuperf/trace_writer.h"

namespace gpuperf::synth {
namespace {

constexpr uint64_t kJobStartNs = 20'000'000'000;  // true time of the first step
constexpr uint64_t kWallEpochNs = 1'760'000'000'000'000'000;
constexpr uint64_t kCommNs = 150'000;            // an all-reduce after the last rank arrived
constexpr uint64_t kGapNs = 2'000;               // between two kernels of a rank
constexpr uint64_t kAllReduceCount = 4'194'304;  // floats: 16 MiB
constexpr uint64_t kCommHash = 0x5eed00c0ffee1234;

uint64_t Mix(uint64_t x) {  // splitmix64: a fixed, well-spread value per input
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

struct Plan {
  const SyntheticJobOptions& o;
  uint32_t slow_rank;
  uint64_t compute_per_step;  // compute kernels per step
  uint64_t step_ns;

  explicit Plan(const SyntheticJobOptions& options)
      : o(options),
        slow_rank(options.slow_rank >= 0 ? static_cast<uint32_t>(options.slow_rank)
                                         : options.ranks / 2),
        compute_per_step(options.kernels_per_rank / options.collectives_per_rank - 1),
        step_ns(compute_per_step * 30'000 + 1'000'000) {}

  // The compute kernel's duration: 5 to 25 us, the same for a step's n-th kernel on every
  // rank (the same model), a little jitter per rank.
  uint64_t KernelNs(uint32_t rank, uint64_t step, uint64_t n) const {
    return 5'000 + (n * 7'919 % 20'000) + Mix(rank * 1'000'003 + step * 131 + n) % 500;
  }
  // When the rank reaches the step's all-reduce (true time).
  uint64_t Arrival(uint32_t rank, uint64_t step) const {
    uint64_t t = kJobStartNs + step * step_ns;
    for (uint64_t n = 0; n < compute_per_step; ++n) t += KernelNs(rank, step, n) + kGapNs;
    return t + (rank == slow_rank ? o.slow_delay_ns : 0);
  }
  uint32_t HostOf(uint32_t rank) const {
    return rank / std::max<uint32_t>(1, o.ranks / std::max<uint32_t>(1, o.hosts));
  }
  int64_t ClockOffset(uint32_t host) const { return host * o.host_clock_step_ns; }
  int64_t WallError(uint32_t host) const {
    if (host == 0 || o.wall_error_ns == 0) return 0;
    return static_cast<int64_t>(Mix(host + o.seed) % (2 * o.wall_error_ns + 1)) - o.wall_error_ns;
  }
};

Status WriteRank(const std::string& path, const Plan& plan, uint32_t rank,
                 const std::vector<uint64_t>& ends) {
  GP_ASSIGN_OR_RETURN(std::unique_ptr<TraceWriter> writer, TraceWriter::Create(path));
  TraceWriter& w = *writer;
  const SyntheticJobOptions& o = plan.o;
  const uint32_t pid = o.first_pid + rank;  // unique: the analysis keys processes by pid
  const uint32_t tid = pid;
  const uint32_t host = plan.HostOf(rank);
  const int64_t offset = plan.ClockOffset(host);
  auto local = [offset](uint64_t true_ns) { return static_cast<uint64_t>(true_ns + offset); };
  const uint32_t ranks_per_host = std::max<uint32_t>(1, o.ranks / std::max<uint32_t>(1, o.hosts));
  const uint32_t device = rank % ranks_per_host % 8;
  const uint64_t begin = kJobStartNs - 2'000'000;
  const uint64_t finish = kJobStartNs + o.collectives_per_rank * plan.step_ns + 2'000'000;

  ProcessRecord process;
  process.pid = pid;
  process.parent_pid = 1;
  process.command = w.InternString("python train.py --model big");
  process.hostname = w.InternString("node" + std::to_string(host));
  process.gpuperf_version = w.InternString("synthetic");
  process.start_ns = local(begin);
  w.Add(process);
  RankRecord r;
  r.pid = pid;
  r.rank = static_cast<int32_t>(rank);
  r.local_rank = static_cast<int32_t>(rank % ranks_per_host);
  r.world_size = static_cast<int32_t>(o.ranks);
  r.local_world_size = static_cast<int32_t>(ranks_per_host);
  r.node_rank = static_cast<int32_t>(host);
  r.launcher = w.InternString("torchrun");
  r.boot_id = w.InternString("boot-" + std::to_string(host));
  w.Add(r);
  DeviceRecord d;
  d.pid = pid;
  d.device_id = device;
  d.name = w.InternString("NVIDIA H100 80GB HBM3");
  d.compute_major = 9;
  d.sm_count = 132;
  w.Add(d);
  w.Add(ContextRecord{pid, 1, device, 7, 0});
  const uint64_t wall = kWallEpochNs + plan.WallError(host);
  w.Add(ClockRecord{pid, local(begin), begin + wall});
  if (o.nccl_plugin) {
    NcclCommRecord comm;
    comm.pid = pid;
    comm.comm_hash = kCommHash;
    comm.rank = static_cast<int32_t>(rank);
    comm.nranks = static_cast<int32_t>(o.ranks);
    comm.nnodes = static_cast<int32_t>(o.hosts);
    comm.plugin_version = 5;
    comm.timestamp_ns = local(begin);
    w.Add(comm);
  }
  std::vector<StringId> names;
  for (int i = 0; i < 24; ++i) {
    names.push_back(w.InternString("_Z" + std::to_string(13 + (i >= 10 ? 2 : 1)) + "model_kernel_" +
                                   std::to_string(i) + "Pfi"));
  }
  const StringId allreduce = w.InternString(
      "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE");
  const StringId launch_api = w.InternString("cuLaunchKernelEx");
  const StringId func = w.InternString("AllReduce");
  const StringId datatype = w.InternString("ncclFloat32");
  const StringId ring = w.InternString("RING");
  const StringId ll = w.InternString("LL");

  uint32_t correlation = 1;
  for (uint64_t step = 0; step < o.collectives_per_rank; ++step) {
    uint64_t t = kJobStartNs + step * plan.step_ns;
    for (uint64_t n = 0; n < plan.compute_per_step; ++n) {
      KernelRecord k;
      k.pid = pid;
      k.name = names[n % names.size()];
      k.device_id = device;
      k.context_id = 1;
      k.stream_id = 7;
      k.start_ns = local(t);
      t += plan.KernelNs(rank, step, n);
      k.end_ns = local(t);
      t += kGapNs;
      k.grid_x = 256;
      k.grid_y = k.grid_z = 1;
      k.block_x = 256;
      k.block_y = k.block_z = 1;
      k.registers_per_thread = 64;
      k.correlation_id = correlation++;
      w.Add(k);
    }
    const uint64_t arrival = plan.Arrival(rank, step);
    KernelRecord k;
    k.pid = pid;
    k.name = allreduce;
    k.device_id = device;
    k.context_id = 1;
    k.stream_id = 13;
    k.start_ns = local(arrival);
    k.end_ns = local(ends[step]);
    k.grid_x = 32;
    k.grid_y = k.grid_z = 1;
    k.block_x = 640;
    k.block_y = k.block_z = 1;
    k.correlation_id = correlation++;
    w.Add(k);
    if (o.nccl_plugin) {
      // NCCL launches the kernel, then reports the collective on the same thread.
      const uint64_t launch = arrival - 20'000;
      w.Add(LaunchLinkRecord{pid, tid, k.correlation_id, 0, launch_api, local(launch)});
      NcclCollectiveRecord c;
      c.pid = pid;
      c.tid = tid;
      c.comm_hash = kCommHash;
      c.rank = static_cast<int32_t>(rank);
      c.nranks = static_cast<int32_t>(o.ranks);
      c.seq = step;
      c.func = func;
      c.count = kAllReduceCount;
      c.type_size = 4;
      c.datatype = datatype;
      c.algorithm = ring;
      c.protocol = ll;
      c.channels = 32;
      c.start_ns = local(launch + 3'000);
      c.end_ns = local(launch + 6'000);
      w.Add(c);
    }
  }
  process.end_ns = local(finish);
  w.Add(process);
  w.Add(ClockRecord{pid, local(finish), finish + wall});
  return w.Close();
}

}  // namespace

Status WriteSyntheticJob(const std::string& dir, const SyntheticJobOptions& options) {
  if (options.ranks == 0 || options.hosts == 0 || options.collectives_per_rank == 0 ||
      options.kernels_per_rank < 2ull * options.collectives_per_rank) {
    return Error(StatusCode::kInvalidArgument,
                 "a job needs ranks, hosts, and at least two kernels per collective");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error(StatusCode::kIoError, "cannot create " + dir + ": " + ec.message());
  const Plan plan(options);
  // Every rank's all-reduce ends when the last rank's data arrived (true time).
  std::vector<uint64_t> ends(options.collectives_per_rank, 0);
  for (uint64_t step = 0; step < ends.size(); ++step) {
    for (uint32_t rank = 0; rank < options.ranks; ++rank) {
      ends[step] = std::max(ends[step], plan.Arrival(rank, step) + kCommNs);
    }
  }
  std::atomic<uint32_t> next{0};
  std::mutex mutex;
  Status first_error;
  auto work = [&] {
    for (uint32_t rank = next++; rank < options.ranks; rank = next++) {
      char name[32];
      std::snprintf(name, sizeof(name), "/rank%04u.gpt", rank);
      Status status = WriteRank(dir + name, plan, rank, ends);
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (first_error.ok()) first_error = status;
      }
    }
  };
  const unsigned threads = std::clamp<unsigned>(
      options.threads ? options.threads : std::thread::hardware_concurrency(), 1, options.ranks);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return first_error;
}

}  // namespace gpuperf::synth
