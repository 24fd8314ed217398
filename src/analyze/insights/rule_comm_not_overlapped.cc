// comm_not_overlapped: communication the GPUs could not hide behind compute. A rank's NCCL
// kernel runs from the moment the rank arrives until every rank has, so on all but the last
// rank to arrive its time includes waiting for the others (that is straggler_rank's
// finding, not communication). The rank with the smallest share of exposed communication
// (communication kernels running with no compute kernel beside them) waited least: its
// share is what the job spends in transfers. The rule fires when that share is 20% of its
// GPU active span and 1 ms: data-parallel training that overlaps its all-reduce with the
// backward pass (DDP's gradient buckets) leaves only the last bucket exposed, a few
// percent of a step; a fifth of the GPU's time in communication alone is a job bound by
// its communication, and worth changing.
#include <algorithm>

#include "analyze/insights/rank_rule_support.h"
#include "analyze/insights/rule_support.h"
#include "analyze/ranks/collectives.h"
#include "base/units.h"

namespace gpuperf::insights {
namespace {

constexpr double kMinExposedShare = 0.20;
constexpr uint64_t kMinExposedNs = 1'000'000;
// Below half overlapped, overlap is the first thing to fix; above it, the volume.
constexpr double kWellOverlapped = 0.5;

double ExposedShare(const RankWork& r) {
  return r.span_ns ? static_cast<double>(r.row->exposed_comm_ns()) / static_cast<double>(r.span_ns)
                   : 0;
}

}  // namespace

void CommNotOverlapped(RankInsightInput& input, std::vector<Insight>& out) {
  const std::vector<RankWork> ranks = CollectRankWork(input);
  const RankWork* least = nullptr;  // the rank that waited least
  size_t with_comm = 0;
  for (const RankWork& r : ranks) {
    if (r.row->comm_kernels == 0) continue;
    ++with_comm;
    if (least == nullptr || ExposedShare(r) < ExposedShare(*least)) least = &r;
  }
  if (with_comm < 2) return;  // one rank's communication is no collective
  const RankRow& row = *least->row;
  const uint64_t exposed = row.exposed_comm_ns();
  const double share = ExposedShare(*least);
  if (exposed < kMinExposedNs || share < kMinExposedShare) return;
  // Its communication by collective kind, and the kernel with the most time (for the stack).
  std::map<std::string, uint64_t> by_kind;
  const std::pair<const std::string, KernelTime>* top = nullptr;
  for (const auto& entry : least->comm) {
    by_kind[CollectiveKind(entry.first)] += entry.second.ns;
    if (top == nullptr || entry.second.ns > top->second.ns) top = &entry;
  }
  std::string kinds;
  for (const auto& [kind, ns] : by_kind) {
    kinds += (kinds.empty() ? "" : ", ") + kind + " " + FormatDuration(ns);
  }

  Insight in;
  in.rule = "comm_not_overlapped";
  in.pid = row.pid;
  if (row.devices.size() == 1) in.device = row.devices[0];
  in.stake = StakeKind::kGpuTime;
  in.at_stake_ns = exposed;
  in.finding = "Communication with no compute beside it took " + FormatDuration(exposed) + " (" +
               FormatPercent(share) + " of the GPU's active span) on " + row.label +
               ", the rank that waited least for the others; its communication kernels: " + kinds +
               ", " + FormatPercent(row.overlap_fraction()) + " overlapped with compute";
  in.evidence = {TimeOf("exposed_communication", exposed),
                 TimeOf("communication", row.comm_ns),
                 TimeOf("overlap", row.overlap_ns),
                 ShareOf("overlap_fraction", row.overlap_fraction()),
                 ShareOf("share_of_active_span", share),
                 TimeOf("compute", row.compute_ns),
                 CountOf("ranks_with_communication", with_comm)};
  if (top != nullptr && top->second.longest != nullptr) {
    in.stack = input.input.PlaceStack(PlaceOfWork(input.input, row.pid, *top->second.longest));
    in.stack_role = "the launch of " + top->first;
  }
  in.suggestion =
      row.overlap_fraction() < kWellOverlapped
          ? "Run communication beside compute: let each gradient bucket's all-reduce start as "
            "soon as the backward pass has filled it (PyTorch DDP does with its default "
            "buckets; check bucket_cap_mb and that no_sync or a custom hook does not defer "
            "them all to the end), prefetch parameters in FSDP, and keep NCCL on its own "
            "stream."
          : "Communication already overlaps compute; send less of it: more work per "
            "communication (larger per-rank batches, gradient accumulation), gradients in "
            "bf16 (a compression hook), and a faster path between GPUs (NCCL_DEBUG=INFO "
            "says whether NCCL uses NVLink or InfiniBand or falls back to sockets).";
  out.push_back(std::move(in));
}

}  // namespace gpuperf::insights
