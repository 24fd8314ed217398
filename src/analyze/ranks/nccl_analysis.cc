#include "analyze/ranks/nccl_analysis.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "analyze/ranks/nccl_join.h"

namespace gpuperf {
namespace {

std::string AlgorithmMix(const std::map<std::string, uint64_t>& counts) {
  std::vector<std::pair<uint64_t, std::string>> sorted;
  for (const auto& [name, n] : counts) sorted.emplace_back(n, name);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::string out;
  for (const auto& [n, name] : sorted) {
    out += (out.empty() ? "" : ", ") + name + " x" + std::to_string(n);
  }
  return out;
}

}  // namespace

void NcclCallCollector::AddLaunchLinks(std::span<const LaunchLinkRecord> records) {
  if (!active()) return;
  for (const LaunchLinkRecord& l : records) {
    launches_.try_emplace({l.pid, l.correlation_id}, l.tid, l.timestamp_ns);
  }
}

void NcclCallCollector::AddApiCalls(std::span<const ApiRecord> records) {
  if (!active()) return;
  for (const ApiRecord& a : records) {
    launches_.try_emplace({a.pid, a.correlation_id}, a.tid, a.start_ns);
  }
}

void NcclCallCollector::AddCollectives(std::span<const NcclCollectiveRecord> records) {
  for (const NcclCollectiveRecord& r : records) {
    Call call;
    call.tid = r.tid;
    call.start_ns = r.start_ns;
    JoinedNcclCall& c = call.joined;
    c.comm_hash = r.comm_hash;
    c.nranks = r.nranks;
    if (auto it = scan_.nccl_comms.find(r.comm_hash); it != scan_.nccl_comms.end()) {
      c.nranks = std::max(c.nranks, it->second.nranks);
    }
    c.seq = r.seq;
    c.func = std::string(name_of_(r.func));
    const std::string algorithm(name_of_(r.algorithm)), protocol(name_of_(r.protocol));
    c.algorithm = algorithm.empty() && protocol.empty() ? "?" : algorithm + "/" + protocol;
    c.bytes = NcclCollectiveBytes(c.func, r.count, r.type_size, c.nranks);
    calls_[r.pid].push_back(std::move(call));
  }
}

std::vector<uint32_t> NcclCallCollector::Pids() const {
  std::vector<uint32_t> pids;
  for (const auto& [pid, calls] : calls_) pids.push_back(pid);
  return pids;
}

void NcclCallCollector::Join(RankPartial& partial) const {
  auto found = calls_.find(partial.pid);
  if (found == calls_.end()) return;
  const std::vector<Call>& calls = found->second;
  const std::vector<CommKernel>& kernels = partial.comm;
  std::vector<NcclLaunch> launches;
  std::vector<size_t> kernel_of_launch;
  for (size_t k = 0; k < kernels.size(); ++k) {
    auto it = launches_.find({partial.pid, kernels[k].correlation_id});
    if (it == launches_.end()) continue;
    launches.push_back({it->second.first, it->second.second});
    kernel_of_launch.push_back(k);
  }
  std::vector<NcclCall> joinable;
  for (const Call& c : calls) joinable.push_back({c.tid, c.start_ns});
  const std::vector<size_t> joined = JoinNcclCalls(joinable, launches);
  // Bytes per kernel, for a group's shares; the first call (in start order) of each.
  std::map<size_t, uint64_t> kernel_bytes;
  std::map<size_t, size_t> kernel_calls, kernel_first;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (joined[i] == kNotJoined) continue;
    const size_t k = kernel_of_launch[joined[i]];
    kernel_bytes[k] += calls[i].joined.bytes;
    ++kernel_calls[k];
    auto [it, fresh] = kernel_first.try_emplace(k, i);
    if (!fresh && calls[i].start_ns < calls[it->second].start_ns) it->second = i;
  }
  partial.kernels_unjoined = kernels.size() - kernel_bytes.size();
  partial.calls.clear();
  for (size_t i = 0; i < calls.size(); ++i) {
    JoinedNcclCall c = calls[i].joined;
    if (joined[i] != kNotJoined) {
      const size_t k = kernel_of_launch[joined[i]];
      c.kernel = static_cast<int64_t>(k);
      c.share = kernel_bytes[k] > 0
                    ? static_cast<double>(c.bytes) / static_cast<double>(kernel_bytes[k])
                    : 1.0 / static_cast<double>(kernel_calls[k]);
      c.primary = kernel_first[k] == i;
    }
    partial.calls.push_back(std::move(c));
  }
}

namespace {

// One rank's part of one instance: its call and the kernel that ran it.
struct NcclPart {
  uint32_t pid = 0;
  const JoinedNcclCall* call = nullptr;
  const CommKernel* kernel = nullptr;  // nullptr: not joined
  uint32_t name = 0;                   // the caller's id of the kernel's name
};
using NcclInstances = std::map<uint64_t, std::vector<NcclPart>>;  // by sequence number
// (communicator, operation) -> its instances.
using NcclRows = std::map<std::pair<uint64_t, std::string>, NcclInstances>;

NcclCollectiveRow FoldRow(const RankScan& scan, uint64_t comm_hash, const std::string& func,
                          const NcclInstances& instances, NcclOutcome& out) {
  NcclCollectiveRow row;
  row.comm_hash = comm_hash;
  row.func = func;
  if (auto it = scan.nccl_comms.find(comm_hash); it != scan.nccl_comms.end()) {
    row.comm_name = it->second.name;
  }
  std::set<uint32_t> pids;
  std::map<std::string, uint64_t> algorithms;
  for (const auto& [seq, parts] : instances) {
    std::set<uint32_t> instance_pids;
    uint64_t last_start = 0, last_end = 0;
    bool all_joined = true;
    for (const NcclPart& part : parts) {
      ++row.calls;
      ++algorithms[part.call->algorithm];
      row.nranks = std::max(row.nranks, part.call->nranks);
      pids.insert(part.pid);
      instance_pids.insert(part.pid);
      if (part.kernel == nullptr) {
        all_joined = false;
        ++row.unjoined;
        continue;
      }
      last_start = std::max(last_start, part.kernel->start_ns);
      last_end = std::max(last_end, part.kernel->end_ns);
    }
    const uint64_t bytes = parts.front().call->bytes;
    row.min_bytes = row.instances == 0 ? bytes : std::min(row.min_bytes, bytes);
    row.max_bytes = std::max(row.max_bytes, bytes);
    ++row.instances;
    row.bytes += bytes;
    if (row.nranks > 0 && instance_pids.size() >= static_cast<size_t>(row.nranks)) ++row.complete;
    if (all_joined && last_end > last_start) {
      ++row.timed;
      row.timed_bytes += bytes;
      row.time_ns += static_cast<uint64_t>(static_cast<double>(last_end - last_start) *
                                           parts.front().call->share);
    }
    // The instance for the straggler analysis: one per kernel (a group's first call).
    CollectiveInstance instance;
    instance.ordinal = static_cast<uint32_t>(seq);
    for (const NcclPart& part : parts) {
      if (part.kernel == nullptr || !part.call->primary) continue;
      instance.name = part.name;
      instance.arrivals.push_back({part.pid, part.kernel->start_ns, part.kernel->end_ns});
    }
    if (!instance.arrivals.empty()) {
      std::sort(instance.arrivals.begin(), instance.arrivals.end(),
                [](const auto& a, const auto& b) { return a.pid < b.pid; });
      out.instances.push_back(std::move(instance));
    }
  }
  row.ranks = static_cast<uint32_t>(pids.size());
  row.algorithms = AlgorithmMix(algorithms);
  if (row.time_ns > 0) {
    row.algbw_gbps = static_cast<double>(row.timed_bytes) / static_cast<double>(row.time_ns);
    row.busbw_gbps = row.algbw_gbps * NcclBusFactor(row.func, row.nranks);
  }
  return row;
}

}  // namespace

NcclOutcome FoldNccl(const RankScan& scan, const std::vector<RankPartial>& partials,
                     const std::function<uint32_t(const RankPartial&, uint32_t)>& name_id) {
  NcclOutcome out;
  NcclRows rows;
  bool any_calls = false;
  for (const RankPartial& p : partials) {
    if (p.calls.empty()) continue;
    any_calls = true;
    out.kernels_unjoined += p.kernels_unjoined;
    for (const JoinedNcclCall& c : p.calls) {
      NcclPart part;
      part.pid = p.pid;
      part.call = &c;
      if (c.kernel >= 0) {
        part.kernel = &p.comm[static_cast<size_t>(c.kernel)];
        part.name = name_id(p, part.kernel->name);
      } else {
        ++out.unjoined;
      }
      rows[{c.comm_hash, c.func}][c.seq].push_back(part);
    }
  }
  for (const auto& [key, instances] : rows) {
    out.rows.push_back(FoldRow(scan, key.first, key.second, instances, out));
  }
  std::sort(out.rows.begin(), out.rows.end(), [](const auto& a, const auto& b) {
    return std::tie(b.time_ns, a.comm_hash, a.func) < std::tie(a.time_ns, b.comm_hash, b.func);
  });
  // Sequence numbers replace kernel order when every process that ran NCCL kernels told
  // the plugin's story too; a mix would match some ranks by one rule and some by the other.
  out.by_sequence = any_calls;
  for (const RankPartial& p : partials) {
    if (!p.comm.empty() && p.calls.empty()) out.by_sequence = false;
  }
  if (!out.by_sequence) out.instances.clear();
  return out;
}

}  // namespace gpuperf
