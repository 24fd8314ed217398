#include "analyze/ranks/rank_scan.h"

#include <algorithm>
#include <set>

namespace gpuperf {

std::string ProcessIdentity::Label() const {
  std::string label = is_rank() ? "rank " + std::to_string(rank) : "pid " + std::to_string(pid);
  std::string where = hostname;
  if (!devices.empty()) {
    if (!where.empty()) where += ", ";
    where += devices.size() == 1 ? "GPU " : "GPUs ";
    for (size_t i = 0; i < devices.size(); ++i) {
      where += (i ? "," : "") + std::to_string(devices[i]);
    }
  }
  if (!where.empty()) label += " (" + where + ")";
  return label;
}

bool RankScan::any_rank() const {
  return std::any_of(processes.begin(), processes.end(),
                     [](const auto& entry) { return entry.second.is_rank(); });
}

std::vector<const ProcessIdentity*> RankScan::InRankOrder() const {
  std::vector<const ProcessIdentity*> out;
  for (const auto& [pid, p] : processes) out.push_back(&p);
  std::stable_sort(out.begin(), out.end(), [](const ProcessIdentity* a, const ProcessIdentity* b) {
    if (a->is_rank() != b->is_rank()) return a->is_rank();
    return a->is_rank() && a->rank < b->rank;
  });
  return out;
}

const ProcessIdentity* RankScan::Find(uint32_t pid) const {
  auto it = processes.find(pid);
  return it == processes.end() ? nullptr : &it->second;
}

std::span<const uint16_t> RankScanChunkTypes() {
  static constexpr uint16_t kTypes[] = {1, 4, 15, 22, 23, 25};  // records.h numbers
  return kTypes;
}

Result<RankScan> ScanRanks(const std::string& path) {
  RankScanSink sink;
  ReadReport ignored;  // the full read that follows reports damage
  GP_RETURN_IF_ERROR(ReadTraceChunks(path, RankScanChunkTypes(), sink, &ignored));
  return sink.Finish();
}

RankScan ScanRanks(const Trace& trace) {
  RankScanSink sink;
  for (StringId id = 1; id < trace.strings.size(); ++id) sink.OnString(id, trace.strings[id]);
  sink.OnProcess(trace.processes);
  sink.OnContext(trace.contexts);
  sink.OnClock(trace.clocks);
  sink.OnRank(trace.ranks);
  sink.OnPowerSample(trace.power_samples);
  sink.OnNcclComm(trace.nccl_comms);
  return sink.Finish();
}

void RankScanSink::OnString(StringId id, std::string_view text) {
  if (strings_.size() <= id) strings_.resize(id + 1);
  strings_[id] = std::string(text);
}

ProcessIdentity& RankScanSink::Process(uint32_t pid) {
  ProcessIdentity& p = scan_.processes[pid];
  p.pid = pid;
  return p;
}

std::string RankScanSink::Str(StringId id) const {
  return id < strings_.size() ? strings_[id] : std::string();
}

void RankScanSink::OnProcess(std::span<const ProcessRecord> records) {
  for (const ProcessRecord& r : records) {
    ProcessIdentity& p = Process(r.pid);
    p.hostname = Str(r.hostname);
    p.command = Str(r.command);
  }
}

void RankScanSink::OnContext(std::span<const ContextRecord> records) {
  for (const ContextRecord& r : records) {
    std::vector<uint32_t>& devices = Process(r.pid).devices;
    auto it = std::lower_bound(devices.begin(), devices.end(), r.device_id);
    if (it == devices.end() || *it != r.device_id) devices.insert(it, r.device_id);
  }
}

void RankScanSink::OnClock(std::span<const ClockRecord> records) {
  for (const ClockRecord& r : records) Process(r.pid).clocks.push_back(r);
}

void RankScanSink::OnRank(std::span<const RankRecord> records) {
  for (const RankRecord& r : records) {
    ProcessIdentity& p = Process(r.pid);
    const std::string boot_id = Str(r.boot_id);
    if (!p.boot_id.empty() && !boot_id.empty() && boot_id != p.boot_id) {
      scan_.warnings.push_back("pid " + std::to_string(r.pid) +
                               " was recorded on two hosts (boot ids " + p.boot_id + " and " +
                               boot_id + "): the analysis cannot tell their records apart");
    }
    p.rank = r.rank;
    p.local_rank = r.local_rank;
    p.world_size = r.world_size;
    p.local_world_size = r.local_world_size;
    p.node_rank = r.node_rank;
    p.launcher = Str(r.launcher);
    p.job_id = Str(r.job_id);
    p.master = Str(r.master);
    p.boot_id = Str(r.boot_id);
    p.visible_devices = Str(r.visible_devices);
  }
}

void RankScanSink::OnPowerSample(std::span<const PowerSampleRecord> records) {
  scan_.power_samples.insert(scan_.power_samples.end(), records.begin(), records.end());
}

void RankScanSink::OnNcclComm(std::span<const NcclCommRecord> records) {
  for (const NcclCommRecord& r : records) {
    NcclComm& comm = scan_.nccl_comms[r.comm_hash];
    if (comm.name.empty()) comm.name = Str(r.name);
    comm.nranks = std::max(comm.nranks, r.nranks);
  }
}

RankScan RankScanSink::Finish() {
  CheckRanks(scan_);
  return std::move(scan_);
}

namespace {

// "3, 5, 9", at most `most` of them, then how many more.
std::string RankList(const std::vector<int32_t>& ranks, size_t most) {
  std::string text;
  for (size_t i = 0; i < ranks.size() && i < most; ++i) {
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  if (ranks.size() > most) text += " and " + std::to_string(ranks.size() - most) + " more";
  return text;
}

}  // namespace

void CheckRanks(RankScan& scan) {
  // A process whose rank record was lost (its trace cut short) has no boot id; on a host
  // whose other processes agree on one, it shares their clock.
  std::map<std::string, std::set<std::string>> boots_of_host;
  for (const auto& [pid, p] : scan.processes) {
    if (!p.boot_id.empty() && !p.hostname.empty()) boots_of_host[p.hostname].insert(p.boot_id);
  }
  for (auto& [pid, p] : scan.processes) {
    auto it = boots_of_host.find(p.hostname);
    if (p.boot_id.empty() && it != boots_of_host.end() && it->second.size() == 1) {
      p.boot_id = *it->second.begin();
    }
  }
  std::map<int32_t, std::vector<const ProcessIdentity*>> by_rank;
  int32_t world = -1;
  for (const auto& [pid, p] : scan.processes) {
    if (!p.is_rank()) continue;
    by_rank[p.rank].push_back(&p);
    world = std::max(world, p.world_size);
  }
  for (const auto& [rank, claimants] : by_rank) {
    if (claimants.size() < 2) continue;
    std::string who;
    for (const ProcessIdentity* p : claimants) {
      who += (who.empty() ? "" : ", ") + std::string("pid ") + std::to_string(p->pid) +
             (p->hostname.empty() ? "" : " on " + p->hostname);
    }
    scan.warnings.push_back("rank " + std::to_string(rank) + " is claimed by " +
                            std::to_string(claimants.size()) + " processes (" + who +
                            "): two runs' traces in one directory? Each is reported by its pid");
  }
  std::vector<int32_t> missing;
  for (int32_t r = 0; r < world; ++r) {
    if (by_rank.count(r) == 0) missing.push_back(r);
  }
  if (!missing.empty()) {
    scan.warnings.push_back(std::string(missing.size() == 1 ? "rank " : "ranks ") +
                            RankList(missing, 8) + " of the job's " + std::to_string(world) +
                            " have no trace here (or lost their rank record): the job's tables "
                            "are of the " +
                            std::to_string(world - static_cast<int32_t>(missing.size())) +
                            " ranks that have one");
  }
}

}  // namespace gpuperf
