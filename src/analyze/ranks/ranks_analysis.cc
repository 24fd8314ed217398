#include "analyze/ranks/ranks_analysis.h"

#include <algorithm>

#include "analyze/ranks/clock_shift_sink.h"
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

// The communication kernels of a trace, per process, as recorded (for clock alignment).
class CommKernelSink final : public RecordSink {
 public:
  void OnString(StringId id, std::string_view text) override {
    if (strings_.size() <= id) strings_.resize(id + 1);
    strings_[id] = std::string(text);
  }
  void OnKernel(std::span<const KernelRecord> records) override {
    for (const KernelRecord& k : records) {
      if (k.name >= ids_.size()) ids_.resize(std::max<size_t>(k.name + 1, strings_.size()), -1);
      int64_t& id = ids_[k.name];
      if (id < 0)
        id = CommKernelName(k.name < strings_.size() ? strings_[k.name] : "").empty() ? 0 : k.name;
      if (id > 0) {
        by_pid_[k.pid].push_back({k.name, k.stream_id, k.device_id, k.start_ns, k.end_ns});
      }
    }
  }
  MatchedCollectives Match() { return MatchCollectives(std::move(by_pid_)); }

 private:
  std::vector<std::string> strings_{std::string()};
  std::vector<int64_t> ids_;
  std::map<uint32_t, std::vector<CommKernel>> by_pid_;
};

}  // namespace

RanksAnalysis::RanksAnalysis(const RankScan& scan, const ClockAlignment& clocks, NameOf name_of)
    : scan_(scan), clocks_(clocks), name_of_(name_of), nccl_(scan, std::move(name_of)) {}

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

RanksModel RanksAnalysis::Finish() {
  RanksModel model;
  const bool any_comm = !comm_.empty();
  std::map<uint32_t, uint64_t> kernels;  // per process
  for (const auto& [key, busy] : busy_) kernels[key.first] += busy.kernels;
  // Worth a section: a distributed job, or one process driving NCCL over several GPUs.
  if (!scan_.any_rank() && !any_comm) return model;
  std::map<uint32_t, size_t> row_of_pid;
  for (const ProcessIdentity* p : scan_.InRankOrder()) {
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
  for (auto& [key, busy] : busy_) {
    auto it = row_of_pid.find(key.first);
    if (it == row_of_pid.end()) continue;
    RankRow& row = model.ranks[it->second];
    row.devices.push_back(key.second);
    row.compute_ns += busy.compute.covered_ns();
    row.comm_ns += busy.comm.covered_ns();
    row.overlap_ns += Intersection(busy.compute.intervals(), busy.comm.intervals());
  }
  for (RankRow& row : model.ranks) {
    row.kernels = kernels.count(row.pid) ? kernels[row.pid] : 0;
    row.comm_kernels = comm_.count(row.pid) ? comm_[row.pid].size() : 0;
    ProcessIdentity label_source;
    label_source.pid = row.pid;
    if (const ProcessIdentity* p = scan_.Find(row.pid)) label_source = *p;
    if (!row.devices.empty()) label_source.devices = row.devices;
    row.label = label_source.Label();
  }

  NcclAnalysis::Outcome nccl = nccl_.Finish(comm_);
  model.nccl = std::move(nccl.rows);
  model.nccl_unjoined = nccl.unjoined;
  model.nccl_kernels_unjoined = nccl.kernels_unjoined;
  MatchedCollectives matched;
  if (nccl.by_sequence) {
    model.matched_by_sequence = true;
    matched.instances = std::move(nccl.instances);
    matched.unmatched = nccl.kernels_unjoined;
  } else {
    matched = MatchCollectives(std::move(comm_));
  }
  model.unmatched_comm_kernels = matched.unmatched;
  std::map<uint32_t, std::vector<uint64_t>> delays;  // pid -> delay at each last arrival
  std::map<uint32_t, CollectiveRow> by_name;
  std::map<uint32_t, std::vector<uint64_t>> spreads, end_spreads;
  for (const CollectiveInstance& instance : matched.instances) {
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
    row.name = comm_names_[name];
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
  model.clocks = clocks_.hosts;
  model.warnings = scan_.warnings;
  model.warnings.insert(model.warnings.end(), clocks_.warnings.begin(), clocks_.warnings.end());
  return model;
}

Result<ClockAlignment> AlignTraceClocks(const std::string& path, const RankScan& scan) {
  if (ClockDomains(scan) < 2) return ClockAlignment();
  CommKernelSink sink;
  const uint16_t kernels[] = {5};  // KernelRecord
  ReadReport ignored;
  GP_RETURN_IF_ERROR(ReadTraceChunks(path, kernels, sink, &ignored));
  MatchedCollectives matched = sink.Match();
  return AlignClocks(scan, &matched);
}

ClockAlignment AlignTraceClocks(const Trace& trace, const RankScan& scan) {
  if (ClockDomains(scan) < 2) return ClockAlignment();
  CommKernelSink sink;
  for (StringId id = 1; id < trace.strings.size(); ++id) sink.OnString(id, trace.strings[id]);
  sink.OnKernel(trace.kernels);
  MatchedCollectives matched = sink.Match();
  return AlignClocks(scan, &matched);
}

namespace {

// Feeds the kernels of a stream into a RanksAnalysis.
class RanksSink final : public RecordSink {
 public:
  RanksSink(const RankScan& scan, const ClockAlignment& clocks)
      : analysis_(scan, clocks, [this](StringId id) {
          return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
        }) {}
  void OnString(StringId id, std::string_view text) override {
    if (strings_.size() <= id) strings_.resize(id + 1);
    strings_[id] = std::string(text);
  }
  void OnKernel(std::span<const KernelRecord> records) override { analysis_.AddKernels(records); }
  void OnLaunchLink(std::span<const LaunchLinkRecord> records) override {
    analysis_.AddLaunchLinks(records);
  }
  void OnApi(std::span<const ApiRecord> records) override { analysis_.AddApiCalls(records); }
  void OnNcclCollective(std::span<const NcclCollectiveRecord> records) override {
    analysis_.AddNcclCollectives(records);
  }
  RanksModel Finish() { return analysis_.Finish(); }

 private:
  std::vector<std::string> strings_{std::string()};
  RanksAnalysis analysis_;
};

}  // namespace

Result<RanksModel> AnalyzeRanks(const std::string& path) {
  GP_ASSIGN_OR_RETURN(RankScan scan, ScanRanks(path));
  GP_ASSIGN_OR_RETURN(ClockAlignment clocks, AlignTraceClocks(path, scan));
  const bool nccl = !scan.nccl_comms.empty();
  RanksSink sink(scan, clocks);
  // Kernels; with plugin records also API calls, launch links and the collectives.
  const uint16_t kernels_only[] = {5};
  const uint16_t with_nccl[] = {5, 8, 13, 24};
  const std::span<const uint16_t> kernels =
      nccl ? std::span<const uint16_t>(with_nccl) : std::span<const uint16_t>(kernels_only);
  if (clocks.identity()) {
    GP_RETURN_IF_ERROR(ReadTraceChunks(path, kernels, sink, nullptr));
  } else {
    ClockShiftSink shifted(sink, clocks);
    GP_RETURN_IF_ERROR(ReadTraceChunks(path, kernels, shifted, nullptr));
  }
  return sink.Finish();
}

RanksModel AnalyzeRanks(const Trace& trace) {
  RankScan scan = ScanRanks(trace);
  ClockAlignment clocks = AlignTraceClocks(trace, scan);
  RanksSink sink(scan, clocks);
  for (StringId id = 1; id < trace.strings.size(); ++id) sink.OnString(id, trace.strings[id]);
  const auto feed = [&trace](RecordSink& to) {
    to.OnKernel(trace.kernels);
    to.OnLaunchLink(trace.launch_links);
    to.OnApi(trace.apis);
    to.OnNcclCollective(trace.nccl_collectives);
  };
  if (clocks.identity()) {
    feed(sink);
  } else {
    ClockShiftSink shifted(sink, clocks);
    feed(shifted);
  }
  return sink.Finish();
}

}  // namespace gpuperf
