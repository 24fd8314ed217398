#include "cli/record_summary.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "base/stall_names.h"
#include "base/units.h"
#include "gpuperf/stack_marker.h"
#include "gpuperf/stats.h"
#include "gpuperf/trace_lock.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf::cli {
namespace {

class TotalsSink final : public RecordSink {
 public:
  explicit TotalsSink(RecordTotals& totals) : totals_(totals) {}
  void OnProcess(std::span<const ProcessRecord> records) override {
    loss_.AddProcesses(records);
    for (const auto& r : records) {
      if (r.end_ns > r.start_ns) {
        totals_.longest_cuda_ns = std::max(totals_.longest_cuda_ns, r.end_ns - r.start_ns);
      }
    }
  }
  void OnKernel(std::span<const KernelRecord> records) override {
    totals_.kernels += records.size();
    for (const auto& r : records) totals_.kernel_ns += r.end_ns - r.start_ns;
  }
  void OnApi(std::span<const ApiRecord> records) override { totals_.api_calls += records.size(); }
  void OnMemcpy(std::span<const MemcpyRecord> records) override {
    totals_.memcpys += records.size();
    for (const auto& r : records) totals_.memcpy_bytes += r.bytes;
  }
  void OnMemset(std::span<const MemsetRecord> records) override {
    totals_.memsets += records.size();
  }
  void OnStack(const StackRecord& stack) override {
    if (stack.pcs.size() == 1 && stack.pcs[0] == kLaunchNotSampledWord) {
      not_sampled_stacks_.insert(stack.id);
    }
  }
  void OnLaunchLink(std::span<const LaunchLinkRecord> records) override {
    totals_.launch_links += records.size();
    for (const auto& r : records) {
      if (not_sampled_stacks_.count(r.stack_id) != 0) {
        ++totals_.links_not_sampled;
      } else {
        totals_.links_with_stack += r.stack_id != 0;
      }
    }
  }
  void OnMetricRange(std::span<const MetricRangeRecord> records) override {
    totals_.metric_ranges += records.size();
  }
  // A trace's strings come before the records that name them.
  void OnString(StringId id, std::string_view text) override {
    if (IsNotIssuedStall(text)) not_issued_stalls_.insert(id);
  }
  void OnPcSample(const PcSampleRecord& sample) override {
    for (const PcStallCount& stall : sample.stalls) {
      if (!not_issued_stalls_.contains(stall.reason)) totals_.pc_samples += stall.samples;
    }
  }
  void OnStat(std::span<const StatRecord> records) override {
    loss_.AddStats(records);
    for (const auto& r : records) stats_[r.pid].Fold(r.stat, r.value);
  }
  void OnRank(std::span<const RankRecord> records) override {
    for (const auto& r : records) {
      if (r.rank < 0) continue;
      totals_.ranks.push_back(r.rank);
      totals_.world_size = std::max(totals_.world_size, r.world_size);
    }
  }
  void OnPowerSample(std::span<const PowerSampleRecord> records) override {
    totals_.power_samples += records.size();
  }
  void OnNcclCollective(std::span<const NcclCollectiveRecord> records) override {
    totals_.nccl_collectives += records.size();
  }
  void OnNcclComm(std::span<const NcclCommRecord> records) override {
    for (const auto& r : records) nccl_comms_.insert(r.comm_hash);
    totals_.nccl_comms = nccl_comms_.size();
  }
  void Finish(const ReadReport& read) {
    // A program that execs keeps its pid: each image is a process of its own here.
    totals_.processes = static_cast<uint32_t>(loss_.images().size());
    std::sort(totals_.ranks.begin(), totals_.ranks.end());
    for (const auto& [image, finished] : loss_.images()) {
      if (finished) totals_.finished_pids.push_back(image.first);
    }
    StatCounters all;
    for (const auto& [pid, stats] : stats_) all += stats;
    totals_.clients_refused = all[StatId::cupti_clients_refused];
    totals_.loss = SummarizeDataLoss(read, loss_.Rows());
  }

 private:
  RecordTotals& totals_;
  RecordingLossCollector loss_;
  std::map<uint32_t, StatCounters> stats_;  // by pid
  std::set<uint64_t> nccl_comms_;           // hashes seen
  std::set<StackId> not_sampled_stacks_;    // "[launch not sampled]" (--sample-launches)
  std::set<StringId> not_issued_stalls_;    // subsets of other reasons (base/stall_names.h)
};

}  // namespace

Result<RecordTotals> SummarizeRecording(const std::string& dir) {
  RecordTotals totals;
  TotalsSink sink(totals);
  ReadReport report;
  GP_RETURN_IF_ERROR(ReadTrace(dir, sink, &report));
  sink.Finish(report);
  // A process still writing its trace (one that outlived the command, or another run's) has
  // not ended at all: it is listed as still being recorded (SummarizeDataLoss), not as lost.
  totals.being_recorded = report.being_recorded;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".gpt") totals.bytes_on_disk += entry.file_size(ec);
  }
  return totals;
}

namespace {

// A process that died before its final flush (SIGKILL, OOM, _exit, exec) has no counter for
// what it lost: the summary says so rather than "nothing".
std::string UnfinishedDetail(const DataLossTotal& unfinished) {
  const std::vector<uint32_t>& pids = unfinished.pids;
  std::string listed;
  for (size_t i = 0; i < pids.size() && i < 3; ++i) {
    listed += (i ? ", " : "") + std::to_string(pids[i]);
  }
  if (pids.size() > 3) listed += ", ...";
  return "up to one flush period of records from " + FormatCount(unfinished.value) +
         (unfinished.value == 1 ? " process that ended before its"
                                : " processes that ended before their") +
         " final flush (pid " + listed + ")";
}

// One line per kind of loss, each the total of `report`'s rows of that kind (named at the
// end, as `report` names them).
std::string LossLines(const DataLossSummary& loss) {
  std::string out;
  for (const DataLossTotal& total : TotalDataLoss(loss)) {
    const std::string what = total.stat == "process_incomplete"
                                 ? UnfinishedDetail(total)
                                 : FormatCount(total.value) + " " + total.description;
    out += (out.empty() ? "  LOST      " : "            ") + what + " [" + total.stat + "]\n";
  }
  return out.empty() ? "  lost      nothing\n" : out;
}

}  // namespace

std::string FormatRecordSummary(const RecordTotals& t, const std::string& dir,
                                const std::string& note) {
  std::string out;
  out += "gpuperf: recorded " + FormatCount(t.processes) +
         (t.processes == 1 ? " process" : " processes") + " into " + dir + " (" +
         FormatBytes(t.bytes_on_disk) + ")\n";
  // A metrics run keeps no kernel records (replay would make their times meaningless).
  if (t.kernels || !t.metric_ranges) {
    out += "  kernels   " + FormatCount(t.kernels) + " (" + FormatDuration(t.kernel_ns) +
           " of GPU time)\n";
    out += "  copies    " + FormatCount(t.memcpys) + " (" + FormatBytes(t.memcpy_bytes) +
           "), sets " + FormatCount(t.memsets) + "\n";
  }
  if (t.metric_ranges) out += "  metrics   " + FormatCount(t.metric_ranges) + " ranges measured\n";
  if (t.pc_samples) out += "  PC samples " + FormatCount(t.pc_samples) + "\n";
  out += "  API calls " + FormatCount(t.api_calls) + ", launch stacks " +
         FormatCount(t.links_with_stack) + " of " + FormatCount(t.launch_links);
  if (t.links_not_sampled != 0) {
    out += " (" + FormatCount(t.links_not_sampled) + " not sampled: --sample-launches)";
  }
  out += "\n";
  if (!t.ranks.empty()) {
    std::string ranks;
    for (size_t i = 0; i < t.ranks.size() && i < 8; ++i) {
      ranks += (i ? ", " : "") + std::to_string(t.ranks[i]);
    }
    if (t.ranks.size() > 8) ranks += ", ...";
    out += "  ranks     " + ranks +
           (t.world_size > 0 ? " of " + std::to_string(t.world_size) : std::string()) + "\n";
  }
  if (t.power_samples > 0) {
    out += "  power     " + FormatCount(t.power_samples) + " GPU power readings (NVML)\n";
  }
  if (t.clients_refused > 0) {
    // The loss is the other profiler's, not this trace's: a warning, with what to do.
    out += "  warning   " + FormatCount(t.clients_refused) +
           (t.clients_refused == 1 ? " CUPTI client" : " CUPTI clients") +
           " in the program (torch.profiler?) refused CUPTI, which gpuperf held: their traces lack "
           "CUDA events; use one profiler at a time\n";
  }
  if (t.nccl_comms > 0) {
    out += "  nccl      " + FormatCount(t.nccl_collectives) + " collectives on " +
           FormatCount(t.nccl_comms) + " communicator" + (t.nccl_comms == 1 ? "" : "s") +
           " (NCCL profiler plugin)\n";
  }
  for (const ReadReport::BeingRecorded& file : t.being_recorded) {
    out += "  running   " + StillBeingRecorded(file.path, file.pid).message() +
           ": counted as far as it is written\n";
  }
  out += LossLines(t.loss);
  out += note;
  out += "next: gpuperf report " + dir + "  |  gpuperf flamegraph " + dir + "  |  gpuperf export " +
         dir + "\n";
  return out;
}

std::string DescribeEmptyRange(const RecordTotals& t, double delay_s, double duration_s) {
  if (t.kernels != 0 || t.metric_ranges != 0 || (delay_s <= 0 && duration_s <= 0)) return "";
  const auto seconds = [](double s) {  // as the user wrote it: "--delay 3 s", not "3.00 s"
    char text[32];
    std::snprintf(text, sizeof(text), "%g s", s);
    return std::string(text);
  };
  std::string range = delay_s > 0 ? "--delay " + seconds(delay_s) : std::string();
  if (duration_s > 0) range += (range.empty() ? "" : ", ") + ("--duration " + seconds(duration_s));
  const std::string note = "  note      no kernel in the capture range (" + range + "): ";
  const uint64_t delay_ns = static_cast<uint64_t>(delay_s * 1e9);
  if (delay_ns > 0 && t.longest_cuda_ns != 0 && t.longest_cuda_ns < delay_ns) {
    return note + "the program ended " + FormatDuration(t.longest_cuda_ns) +
           " after CUDA started, before the range began; use a shorter --delay\n";
  }
  return note +
         "none was launched in it (still setting up? PyTorch's set-up takes seconds); move or "
         "widen the range\n";
}

}  // namespace gpuperf::cli
