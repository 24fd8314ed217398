#include "support/rank_trace.h"

#include <algorithm>
#include <filesystem>

#include "support/test_trace.h"

namespace gpuperf::testing {
namespace {

constexpr uint64_t kUs = 1000;

struct Host {
  std::string name;
  int64_t clock_offset = 0;  // host clock = true time + this
  int64_t wall_error = 0;
};

Host HostOf(const RankJobOptions& o, uint32_t rank) {
  Host host;
  host.name = o.hosts.empty() ? "node0" : o.hosts[rank % o.hosts.size()];
  std::vector<std::string> distinct;
  for (const std::string& h : o.hosts) {
    if (std::find(distinct.begin(), distinct.end(), h) == distinct.end()) distinct.push_back(h);
  }
  const auto index = static_cast<int64_t>(std::find(distinct.begin(), distinct.end(), host.name) -
                                          distinct.begin());
  host.clock_offset = (o.hosts.empty() ? 0 : index) * o.host_clock_step_ns;
  host.wall_error = (o.hosts.empty() ? 0 : index) * o.wall_error_ns;
  return host;
}

void AddClock(TestTrace& t, uint32_t pid, const Host& host, uint64_t true_ns) {
  t.trace().clocks.push_back(
      ClockRecord{pid, true_ns + host.clock_offset, true_ns + kWallEpochNs + host.wall_error});
}

Trace MakeRank(const RankJobOptions& o, uint32_t rank) {
  TestTrace t;
  const uint32_t pid = o.first_pid + rank;
  const Host host = HostOf(o, rank);
  const uint64_t end = kJobStartNs + o.steps * o.step_ns;
  const uint64_t begin = kJobStartNs - 1'000'000 - o.startup_idle_ns;
  auto local = [&host](uint64_t true_ns) { return true_ns + host.clock_offset; };
  t.Process(pid, "python train.py");
  ProcessRecord& process = t.trace().processes.back();
  process.hostname = t.Str(host.name);
  process.start_ns = local(begin);
  process.end_ns = local(end + 1'000'000);
  RankRecord r;
  r.pid = pid;
  r.rank = static_cast<int32_t>(rank);
  r.local_rank = static_cast<int32_t>(rank);
  r.world_size = static_cast<int32_t>(o.ranks);
  r.launcher = t.Str("torchrun");
  r.boot_id = t.Str("boot-" + host.name);
  t.trace().ranks.push_back(r);
  const uint32_t device = rank % 8;
  t.trace().contexts.push_back(ContextRecord{pid, 1, device, 7, 0});
  AddClock(t, pid, host, begin);
  const StackId stack = t.Stack(pid, {"main", "train_step"});
  uint32_t correlation = 1;
  auto launch = [&](StackId from, const char* name, uint64_t start, uint64_t stop,
                    uint32_t stream) {
    t.Link(pid, pid, correlation, from, "cudaLaunchKernel", local(start) - 5 * kUs);
    t.Kernel(pid, name, correlation++, local(start), local(stop), device, stream);
  };
  auto kernel = [&](const char* name, uint64_t start, uint64_t stop, uint32_t stream) {
    launch(stack, name, start, stop, stream);
  };
  const bool slow = static_cast<int32_t>(rank) == o.slow_rank;
  const uint64_t last = o.slow_rank >= 0 ? o.delay_ns + o.slow_kernel_ns : 0;  // D + E
  const uint64_t d = slow ? o.delay_ns : 0;
  const uint64_t e = slow ? o.slow_kernel_ns : 0;
  if (o.startup_idle_ns > 0) {
    const uint64_t idle = slow ? o.startup_idle_ns : 0;
    kernel("_Z4initv", kJobStartNs - idle - 600 * kUs, kJobStartNs - idle - 500 * kUs, 7);
    launch(t.Stack(pid, {"main", "setup_model"}), "_Z5setupv", kJobStartNs - 500 * kUs,
           kJobStartNs - 400 * kUs, 7);
  }
  for (uint32_t step = 0; step < o.steps; ++step) {
    const uint64_t t0 = kJobStartNs + step * o.step_ns;
    kernel("_Z7forwardv", t0 + d, t0 + d + 300 * kUs, 7);
    kernel("_Z8backwardv", t0 + d + 300 * kUs, t0 + d + e + 600 * kUs, 7);
    kernel("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE",
           t0 + d + e + 400 * kUs, t0 + last + 400 * kUs + o.comm_ns, 99);
    if (slow && o.extra_kernel_ns > 0) {
      const uint64_t after = t0 + last + 400 * kUs + o.comm_ns;
      kernel("_Z8evaluatev", after, after + o.extra_kernel_ns, 7);
    }
  }
  if (o.power_interval_ns > 0) {
    uint64_t energy_mj = 1'000'000;
    uint64_t previous_mw = 0;
    for (uint64_t at = kJobStartNs; at <= end; at += o.power_interval_ns) {
      const uint64_t since = (at - kJobStartNs) % o.step_ns;
      const bool computing = since >= d && since < d + e + 600 * kUs && at < end;
      const double scale = static_cast<int32_t>(rank) == o.hot_rank ? o.hot_power_scale : 1.0;
      const auto mw = static_cast<uint32_t>((computing ? 300'000 : 100'000) * scale);
      if (at > kJobStartNs)
        energy_mj += (previous_mw + mw) * o.power_interval_ns / 2 / 1'000'000'000;
      const bool edge = at == kJobStartNs || at + o.power_interval_ns > end;
      t.trace().power_samples.push_back(PowerSampleRecord{
          pid, device, local(at), mw, edge ? energy_mj : 0, PowerSource::kInstant});
      previous_mw = mw;
    }
  }
  AddClock(t, pid, host, end + 1'000'000);
  return std::move(t.trace());
}

Trace MakeAgent(const RankJobOptions& o) {
  TestTrace t;
  const uint32_t pid = o.first_pid - 1;
  t.Process(pid, "/usr/bin/python3 /usr/local/bin/torchrun --nproc-per-node 2 train.py");
  t.trace().processes.back().hostname = t.Str(HostOf(o, 0).name);
  t.trace().processes.back().start_ns = kJobStartNs - 5'000'000;
  RankRecord r;
  r.pid = pid;
  r.boot_id = t.Str("boot-" + HostOf(o, 0).name);
  t.trace().ranks.push_back(r);
  AddClock(t, pid, HostOf(o, 0), kJobStartNs - 5'000'000);
  return std::move(t.trace());
}

}  // namespace

std::vector<Trace> MakeRankJob(const RankJobOptions& options) {
  std::vector<Trace> traces;
  if (options.with_agent) traces.push_back(MakeAgent(options));
  for (uint32_t rank = 0; rank < options.ranks; ++rank) traces.push_back(MakeRank(options, rank));
  return traces;
}

Status WriteRankJob(const RankJobOptions& options, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::vector<Trace> traces = MakeRankJob(options);
  size_t rank = 0;
  for (size_t i = 0; i < traces.size(); ++i) {
    const bool agent = options.with_agent && i == 0;
    GP_RETURN_IF_ERROR(WriteTrace(
        traces[i], dir + (agent ? "/agent.gpt" : "/rank" + std::to_string(rank++) + ".gpt")));
  }
  return Status::Ok();
}

}  // namespace gpuperf::testing
