#include "analyze/ranks/ranks_analysis.h"

#include <algorithm>
#include <unordered_map>

#include "analyze/ranks/median.h"

namespace gpuperf {
namespace {

// Time covered by both of two sorted lists of disjoint intervals.
uint64_t Intersection(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  uint64_t total = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const uint64_t begin = std::max(a[i].begin, b[j].begin);
    const uint64_t end = std::min(a[i].end, b[j].end);
    if (end > begin) total += end - begin;
    (a[i].end < b[j].end) ? ++i : ++j;
  }
  return total;
}

// The job's ids of communication kernel names: every partial names its own.
class CommNames {
 public:
  uint32_t Id(const RankPartial& p, uint32_t local) {
    const std::string& name = p.comm_names[local];
    auto [it, fresh] = ids_.try_emplace(name, static_cast<uint32_t>(names_.size()));
    if (fresh) names_.push_back(name);
    return it->second;
  }
  const std::string& operator[](uint32_t id) const { return names_[id]; }

 private:
  std::vector<std::string> names_{std::string()};
  std::unordered_map<std::string, uint32_t> ids_{{std::string(), 0}};
};

struct Matched {
  MatchedCollectives collectives;
  NcclOutcome nccl;
};

// Collective instances across the partials: by sequence number when the plugin described
// every rank's, else by kernel order on each rank's NCCL streams.
Matched MatchPartials(const RankScan& scan, const std::vector<RankPartial>& partials,
                      CommNames& names) {
  Matched out;
  out.nccl = FoldNccl(scan, partials, [&names](const RankPartial& p, uint32_t local) {
    return names.Id(p, local);
  });
  if (out.nccl.by_sequence) {
    out.collectives.instances = std::move(out.nccl.instances);
    out.collectives.unmatched = out.nccl.kernels_unjoined;
    return out;
  }
  std::map<uint32_t, std::vector<CommKernel>> by_pid;
  for (const RankPartial& p : partials) {
    if (p.comm.empty()) continue;
    std::vector<CommKernel>& kernels = by_pid[p.pid];
    for (CommKernel k : p.comm) {
      k.name = names.Id(p, k.name);
      kernels.push_back(k);
    }
  }
  out.collectives = MatchCollectives(std::move(by_pid));
  return out;
}

}  // namespace

RanksAnalysis::RanksAnalysis(const RankScan& scan, NameOf name_of)
    : name_of_(name_of), nccl_(scan, std::move(name_of)) {}

uint32_t RanksAnalysis::CommId(StringId name) {
  if (name >= comm_id_by_name_.size()) comm_id_by_name_.resize(name + 1, -1);
  int64_t& id = comm_id_by_name_[name];
  if (id < 0) {
    const std::string comm = CommKernelName(name_of_(name));
    id = 0;
    if (!comm.empty()) {
      auto it = std::find(comm_names_.begin(), comm_names_.end(), comm);
      id = it - comm_names_.begin();
      if (it == comm_names_.end()) comm_names_.push_back(comm);
    }
  }
  return static_cast<uint32_t>(id);
}

void RanksAnalysis::AddKernels(std::span<const KernelRecord> kernels) {
  Busy* busy = nullptr;
  std::pair<uint32_t, uint32_t> key{0, 0};
  for (const KernelRecord& k : kernels) {
    if (busy == nullptr || key != std::make_pair(k.pid, k.device_id)) {
      key = {k.pid, k.device_id};
      busy = &busy_[key];
    }
    ++busy->kernels;
    if (const uint32_t comm = CommId(k.name)) {
      busy->comm.Add(k.start_ns, k.end_ns);
      comm_[k.pid].push_back(
          {comm, k.stream_id, k.device_id, k.start_ns, k.end_ns, k.correlation_id});
    } else {
      busy->compute.Add(k.start_ns, k.end_ns);
    }
  }
}

std::vector<RankPartial> RanksAnalysis::TakePartials() {
  std::map<uint32_t, RankPartial> by_pid;
  auto partial = [&by_pid](uint32_t pid) -> RankPartial& {
    RankPartial& p = by_pid[pid];
    p.pid = pid;
    return p;
  };
  for (auto& [key, busy] : busy_) {
    RankPartial::Device d;
    d.device = key.second;
    d.kernels = busy.kernels;
    d.compute_ns = busy.compute.covered_ns();
    d.comm_ns = busy.comm.covered_ns();
    d.overlap_ns = Intersection(busy.compute.intervals(), busy.comm.intervals());
    partial(key.first).devices.push_back(d);
  }
  busy_.clear();
  for (auto& [pid, kernels] : comm_) {
    RankPartial& p = partial(pid);
    p.comm_names = comm_names_;
    p.comm = std::move(kernels);
  }
  for (uint32_t pid : nccl_.Pids()) partial(pid);
  std::vector<RankPartial> out;
  for (auto& [pid, p] : by_pid) {
    nccl_.Join(p);
    out.push_back(std::move(p));
  }
  return out;
}

ClockAlignment AlignRanks(const RankScan& scan, const std::vector<RankPartial>& partials) {
  if (ClockDomains(scan) < 2) return ClockAlignment();
  CommNames names;
  Matched matched = MatchPartials(scan, partials, names);
  ClockAlignment clocks = AlignClocks(scan, &matched.collectives);
  clocks.matched_by_sequence = matched.nccl.by_sequence;
  return clocks;
}

RanksModel FinishRanks(const RankScan& scan, const ClockAlignment& clocks,
                       std::vector<RankPartial> partials, bool shift) {
  RanksModel model;
  if (shift && !clocks.identity()) {
    for (RankPartial& p : partials) {
      const int64_t offset = clocks.OffsetOf(p.pid);
      for (CommKernel& k : p.comm) {
        k.start_ns = static_cast<uint64_t>(static_cast<int64_t>(k.start_ns) + offset);
        k.end_ns = static_cast<uint64_t>(static_cast<int64_t>(k.end_ns) + offset);
      }
    }
  }
  std::map<uint32_t, uint64_t> kernels, comm_kernels;  // per process
  bool any_comm = false;
  for (const RankPartial& p : partials) {
    if (!p.devices.empty()) kernels[p.pid] += p.kernels();
    comm_kernels[p.pid] += p.comm.size();
    any_comm |= !p.comm.empty();
  }
  // Worth a section: a distributed job, or one process driving NCCL over several GPUs.
  if (!scan.any_rank() && !any_comm) return model;
  std::map<uint32_t, size_t> row_of_pid;
  for (const ProcessIdentity* p : scan.InRankOrder()) {
    if (!p->is_rank() && kernels.count(p->pid) == 0) continue;  // e.g. torchrun's agent
    RankRow row;
    row.pid = p->pid;
    row.rank = p->rank;
    row.local_rank = p->local_rank;
    row.world_size = p->world_size;
    row.hostname = p->hostname;
    row.launcher = p->launcher;
    row_of_pid[p->pid] = model.ranks.size();
    model.ranks.push_back(std::move(row));
  }
  for (const auto& [pid, count] : kernels) {  // a process whose identity was lost
    if (row_of_pid.count(pid) != 0) continue;
    RankRow row;
    row.pid = pid;
    row_of_pid[pid] = model.ranks.size();
    model.ranks.push_back(std::move(row));
  }
  for (const RankPartial& p : partials) {
    auto it = row_of_pid.find(p.pid);
    if (it == row_of_pid.end()) continue;
    RankRow& row = model.ranks[it->second];
    for (const RankPartial::Device& d : p.devices) {
      row.devices.push_back(d.device);
      row.compute_ns += d.compute_ns;
      row.comm_ns += d.comm_ns;
      row.overlap_ns += d.overlap_ns;
    }
  }
  for (RankRow& row : model.ranks) {
    row.kernels = kernels.count(row.pid) ? kernels[row.pid] : 0;
    row.comm_kernels = comm_kernels.count(row.pid) ? comm_kernels[row.pid] : 0;
    ProcessIdentity label_source;
    label_source.pid = row.pid;
    if (const ProcessIdentity* p = scan.Find(row.pid)) label_source = *p;
    if (!row.devices.empty()) label_source.devices = row.devices;
    row.label = label_source.Label();
  }

  CommNames names;
  Matched matched = MatchPartials(scan, partials, names);
  model.nccl = std::move(matched.nccl.rows);
  model.nccl_unjoined = matched.nccl.unjoined;
  model.nccl_kernels_unjoined = matched.nccl.kernels_unjoined;
  model.matched_by_sequence = matched.nccl.by_sequence;
  model.unmatched_comm_kernels = matched.collectives.unmatched;
  std::map<uint32_t, std::vector<uint64_t>> delays;  // pid -> delay at each last arrival
  std::map<uint32_t, CollectiveRow> by_name;
  std::map<uint32_t, std::vector<uint64_t>> spreads, end_spreads;
  for (const CollectiveInstance& instance : matched.collectives.instances) {
    CollectiveRow& row = by_name[instance.name];
    ++row.instances;
    row.ranks = std::max<uint32_t>(row.ranks, static_cast<uint32_t>(instance.arrivals.size()));
    uint64_t first_start = UINT64_MAX, last_start = 0, second_start = 0;
    uint64_t first_end = UINT64_MAX, last_end = 0;
    uint32_t last_pid = 0;
    for (const auto& a : instance.arrivals) {
      if (auto it = row_of_pid.find(a.pid); it != row_of_pid.end()) {
        RankRow& rank = model.ranks[it->second];
        rank.first_collective_ns =
            rank.collectives++ == 0 ? a.start_ns : std::min(rank.first_collective_ns, a.start_ns);
        rank.last_collective_end_ns = std::max(rank.last_collective_end_ns, a.end_ns);
      }
      first_start = std::min(first_start, a.start_ns);
      first_end = std::min(first_end, a.end_ns);
      last_end = std::max(last_end, a.end_ns);
      if (a.start_ns >= last_start) {
        second_start = last_start;
        last_start = a.start_ns;
        last_pid = a.pid;
      } else {
        second_start = std::max(second_start, a.start_ns);
      }
    }
    spreads[instance.name].push_back(last_start - first_start);
    end_spreads[instance.name].push_back(last_end - first_end);
    if (instance.arrivals.size() >= 2) delays[last_pid].push_back(last_start - second_start);
  }
  for (auto& [name, row] : by_name) {
    row.name = names[name];
    row.kind = CollectiveKind(row.name);
    row.arrival_spread_median_ns = UpperMedian(spreads[name]);
    row.arrival_spread_max_ns = *std::max_element(spreads[name].begin(), spreads[name].end());
    row.end_spread_median_ns = UpperMedian(end_spreads[name]);
    model.collectives.push_back(std::move(row));
  }
  std::sort(model.collectives.begin(), model.collectives.end(),
            [](const CollectiveRow& a, const CollectiveRow& b) {
              return a.instances != b.instances ? a.instances > b.instances : a.name < b.name;
            });
  uint64_t all_delays = 0;
  for (auto& [pid, list] : delays) {
    auto it = row_of_pid.find(pid);
    if (it == row_of_pid.end()) continue;
    RankRow& row = model.ranks[it->second];
    row.last_arrivals = list.size();
    for (uint64_t d : list) row.delay_total_ns += d;
    row.delay_max_ns = *std::max_element(list.begin(), list.end());
    row.delay_median_ns = UpperMedian(list);
    all_delays += row.delay_total_ns;
  }
  const RankRow* worst = nullptr;
  for (const RankRow& row : model.ranks) {
    if (row.delay_total_ns > 0 &&
        (worst == nullptr || row.delay_total_ns > worst->delay_total_ns)) {
      worst = &row;
    }
  }
  if (worst != nullptr) {
    model.straggler =
        Straggler{worst->pid,
                  worst->rank,
                  worst->label,
                  worst->last_arrivals,
                  worst->collectives,
                  worst->delay_median_ns,
                  worst->delay_total_ns,
                  static_cast<double>(worst->delay_total_ns) / static_cast<double>(all_delays)};
  }
  model.clocks = clocks.hosts;
  model.warnings = scan.warnings;
  model.warnings.insert(model.warnings.end(), clocks.warnings.begin(), clocks.warnings.end());
  return model;
}

std::span<const uint16_t> RankPartialChunkTypes(const RankScan& scan) {
  static constexpr uint16_t kKernelsOnly[] = {5};          // KernelRecord
  static constexpr uint16_t kWithNccl[] = {5, 8, 13, 24};  // + API, launch links, collectives
  if (scan.nccl_comms.empty()) return kKernelsOnly;
  return kWithNccl;
}

std::vector<RankPartial> RankPartials(const Trace& trace, const RankScan& scan) {
  RanksSink sink(scan);
  for (StringId id = 1; id < trace.strings.size(); ++id) sink.OnString(id, trace.strings[id]);
  sink.OnKernel(trace.kernels);
  sink.OnLaunchLink(trace.launch_links);
  sink.OnApi(trace.apis);
  sink.OnNcclCollective(trace.nccl_collectives);
  return sink.TakePartials();
}

}  // namespace gpuperf
