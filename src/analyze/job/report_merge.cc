#include "analyze/job/report_merge.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "analyze/flame/flamegraph.h"
#include "analyze/ranks/job_ranks.h"
#include "analyze/ranks/ranks_analysis.h"

namespace gpuperf {
namespace {

void AddStats(DurationStats& into, const DurationStats& more) {
  if (more.count == 0) return;
  if (into.count == 0 || more.min_ns < into.min_ns) into.min_ns = more.min_ns;
  into.max_ns = std::max(into.max_ns, more.max_ns);
  into.count += more.count;
  into.total_ns += more.total_ns;
  into.median_ns = 0;  // not from summaries
}

bool SameLaunchConfig(const KernelConfig& a, const KernelConfig& b) {
  return std::equal(a.grid, a.grid + 3, b.grid) && std::equal(a.block, a.block + 3, b.block) &&
         a.registers_per_thread == b.registers_per_thread &&
         a.static_shared_bytes == b.static_shared_bytes &&
         a.dynamic_shared_bytes == b.dynamic_shared_bytes;
}

// Rows of `from` added into `into` by `key`, `add` folding one row into its match.
template <class Row, class Key, class Add>
void MergeRows(std::vector<Row>& into, std::vector<Row>& from, Key key, Add add) {
  for (Row& row : from) {
    auto it =
        std::find_if(into.begin(), into.end(), [&](const Row& r) { return key(r) == key(row); });
    if (it == into.end()) {
      into.push_back(std::move(row));
    } else {
      add(*it, row);
    }
  }
}

void MergeKernels(std::vector<KernelRow>& into, std::vector<KernelRow>& from) {
  MergeRows(
      into, from, [](const KernelRow& r) -> const std::string& { return r.name; },
      [](KernelRow& a, KernelRow& b) {
        AddStats(a.time, b.time);
        for (KernelConfig& c : b.configs) {
          auto it = std::find_if(a.configs.begin(), a.configs.end(),
                                 [&c](const KernelConfig& d) { return SameLaunchConfig(c, d); });
          if (it == a.configs.end()) {
            a.configs.push_back(c);
          } else {
            it->calls += c.calls;
          }
        }
      });
}

void MergeApis(std::vector<ApiRow>& into, std::vector<ApiRow>& from) {
  MergeRows(
      into, from, [](const ApiRow& r) -> const std::string& { return r.name; },
      [](ApiRow& a, ApiRow& b) {
        AddStats(a.time, b.time);
        a.failures += b.failures;
        MergeRows(
            a.errors, b.errors, [](const ApiError& e) { return e.code; },
            [](ApiError& x, const ApiError& y) { x.count += y.count; });
      });
}

// The processes and communicators of every part. A pid in two parts is a pid of two hosts
// (processes are keyed by pid), said as one reading of all their traces would say it.
RankScan MergeScans(std::vector<JobPart>& parts) {
  RankScan scan;
  for (JobPart& part : parts) {
    for (auto& [pid, p] : part.scan.processes) {
      auto [it, fresh] = scan.processes.try_emplace(pid, p);
      if (!fresh && it->second.boot_id != p.boot_id) {
        scan.warnings.push_back("pid " + std::to_string(pid) +
                                " was recorded on two hosts (boot ids " + it->second.boot_id +
                                " and " + p.boot_id +
                                "): the analysis cannot tell their records apart");
      }
    }
    for (const auto& [hash, comm] : part.scan.nccl_comms) {
      NcclComm& into = scan.nccl_comms[hash];
      if (into.name.empty()) into.name = comm.name;
      into.nranks = std::max(into.nranks, comm.nranks);
    }
  }
  CheckRanks(scan);
  return scan;
}

}  // namespace

Result<JobPart> BuildJobPart(const std::string& path) {
  JobPart part;
  part.name = path;
  GP_ASSIGN_OR_RETURN(part.scan, ScanRanks(path));
  GP_ASSIGN_OR_RETURN(JobRanks job, AnalyzeJobRanks(path, part.scan));
  part.partials = std::move(job.partials);
  auto scan = std::make_shared<const RankScan>(part.scan);
  auto clocks = std::make_shared<const ClockAlignment>(std::move(job.clocks));
  GP_ASSIGN_OR_RETURN(part.report,
                      BuildReport(path, ReportOptions(), scan, clocks, std::move(job.model)));
  ReadReport ignored;  // the report's reading said what it found
  FlameGraphOptions options;
  options.process_roots = true;
  GP_ASSIGN_OR_RETURN(FlameGraph graph, BuildFlameGraphFromFile(path, options, &ignored));
  for (const FlameStack& s : graph.stacks) {
    if ((s.gpu_ns == 0 && s.count == 0) || s.frames.empty()) continue;
    StackWeight w;
    w.process = graph.frames[s.frames[0]].name;
    for (size_t f = 1; f < s.frames.size(); ++f) w.frames.push_back(graph.frames[s.frames[f]].name);
    w.gpu_ns = s.gpu_ns;
    w.count = s.count;
    part.stacks.push_back(std::move(w));
  }
  return part;
}

MergedJob MergeJobParts(std::vector<JobPart> given) {
  MergedJob out;
  std::vector<JobPart> parts;
  std::map<std::pair<uint32_t, std::string>, std::string> holder;  // (pid, boot id) -> part
  for (JobPart& part : given) {
    std::string repeated;
    for (const auto& [pid, p] : part.scan.processes) {
      auto it = holder.find({pid, p.boot_id});
      if (it == holder.end()) {
        repeated.clear();
        break;
      }
      repeated = it->second;
    }
    if (!repeated.empty()) {
      out.warnings.push_back(part.name + " holds the same processes as " + repeated + ": left out");
      continue;
    }
    for (const auto& [pid, p] : part.scan.processes)
      holder.try_emplace({pid, p.boot_id}, part.name);
    parts.push_back(std::move(part));
  }
  out.parts = parts.size();
  out.not_merged = {
      "kernel medians", "synchronization", "memory and leaks",  "GPU utilization and idle gaps",
      "NVTX ranges",    "CPU time",        "profiler overhead", "hardware metrics",
      "energy",         "insights"};
  ReportModel& m = out.report;
  m.medians_known = false;
  RankScan scan = MergeScans(parts);
  std::vector<RankPartial> partials;
  for (JobPart& part : parts) {
    for (RankPartial& p : part.partials) partials.push_back(std::move(p));
  }
  std::stable_sort(partials.begin(), partials.end(),
                   [](const RankPartial& a, const RankPartial& b) { return a.pid < b.pid; });
  std::vector<RankPartial> by_pid;
  for (RankPartial& p : partials) {
    if (!by_pid.empty() && by_pid.back().pid == p.pid) {
      MergeRankPartial(by_pid.back(), std::move(p));
    } else {
      by_pid.push_back(std::move(p));
    }
  }
  const ClockAlignment clocks = AlignRanks(scan, by_pid);
  m.ranks = FinishRanks(scan, clocks, std::move(by_pid), /*shift=*/true);

  // Each part's times are on the clock of its own lowest rank's host: that host's offset
  // puts them on the job's.
  uint64_t first = UINT64_MAX, last = 0;
  std::vector<int64_t> offsets;
  for (const JobPart& part : parts) {
    const auto ordered = part.scan.InRankOrder();
    const int64_t offset = ordered.empty() ? 0 : clocks.OffsetOf(ordered[0]->pid);
    offsets.push_back(offset);
    const ReportSummary& s = part.report.summary;
    if (s.origin_ns == 0 && s.span_ns == 0) continue;  // nothing recorded
    const auto begin = static_cast<uint64_t>(static_cast<int64_t>(s.origin_ns) + offset);
    first = std::min(first, begin);
    last = std::max(last, begin + s.span_ns);
  }
  m.summary.origin_ns = first == UINT64_MAX ? 0 : first;
  m.summary.span_ns = first == UINT64_MAX ? 0 : last - first;
  std::map<std::vector<std::string>, StackWeight> stacks;
  std::set<std::string> processes;  // with launch stacks
  for (size_t i = 0; i < parts.size(); ++i) {
    ReportModel& r = parts[i].report;
    ReportSummary& s = m.summary;
    s.kernels += r.summary.kernels;
    s.kernel_ns += r.summary.kernel_ns;
    s.memcpys += r.summary.memcpys;
    s.memcpy_ns += r.summary.memcpy_ns;
    s.memcpy_bytes += r.summary.memcpy_bytes;
    s.memsets += r.summary.memsets;
    s.memset_ns += r.summary.memset_ns;
    s.api_calls += r.summary.api_calls;
    s.api_ns += r.summary.api_ns;
    s.api_failures += r.summary.api_failures;
    for (ProcessRow& p : r.processes) {
      p.start_ns = static_cast<uint64_t>(static_cast<int64_t>(p.start_ns + r.summary.origin_ns) +
                                         offsets[i]) -
                   m.summary.origin_ns;
      m.processes.push_back(std::move(p));
    }
    m.devices.insert(m.devices.end(), r.devices.begin(), r.devices.end());
    m.loss.insert(m.loss.end(), r.loss.begin(), r.loss.end());
    out.warnings.insert(out.warnings.end(), r.read_warnings.begin(), r.read_warnings.end());
    MergeKernels(m.kernels, r.kernels);
    MergeApis(m.runtime_api, r.runtime_api);
    MergeApis(m.driver_api, r.driver_api);
    MergeRows(
        m.memcpy, r.memcpy, [](const MemcpyRow& c) { return c.kind; },
        [](MemcpyRow& a, const MemcpyRow& b) {
          if (a.time.count == 0 || (b.time.count > 0 && b.min_bytes < a.min_bytes)) {
            a.min_bytes = b.min_bytes;
          }
          a.max_bytes = std::max(a.max_bytes, b.max_bytes);
          AddStats(a.time, b.time);
          a.bytes += b.bytes;
        });
    MergeRows(
        m.memset, r.memset, [](const MemsetRow& c) { return c.memory_kind; },
        [](MemsetRow& a, const MemsetRow& b) {
          AddStats(a.time, b.time);
          a.bytes += b.bytes;
        });
    for (StackWeight& w : parts[i].stacks) processes.insert(w.process);
  }
  // As the flame graph of all the traces draws them: under their process's frame when the
  // job has several, the same paths of different processes apart.
  for (JobPart& part : parts) {
    for (StackWeight& w : part.stacks) {
      if (processes.size() > 1) w.frames.insert(w.frames.begin(), w.process);
      StackWeight& into = stacks[w.frames];
      if (into.frames.empty()) into.frames = w.frames;
      into.gpu_ns += w.gpu_ns;
      into.count += w.count;
    }
  }
  std::sort(m.processes.begin(), m.processes.end(),
            [](const ProcessRow& a, const ProcessRow& b) { return a.pid < b.pid; });
  for (KernelRow& k : m.kernels) {
    k.gpu_time_fraction = m.summary.kernel_ns ? static_cast<double>(k.time.total_ns) /
                                                    static_cast<double>(m.summary.kernel_ns)
                                              : 0;
    std::stable_sort(
        k.configs.begin(), k.configs.end(),
        [](const KernelConfig& a, const KernelConfig& b) { return a.calls > b.calls; });
  }
  SortAndTrim(m, ReportSort::kTotal, 0);
  for (auto& [frames, w] : stacks) out.stacks.push_back(std::move(w));
  std::stable_sort(out.stacks.begin(), out.stacks.end(),
                   [](const StackWeight& a, const StackWeight& b) { return a.gpu_ns > b.gpu_ns; });
  return out;
}

}  // namespace gpuperf
