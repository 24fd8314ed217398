// What `gpuperf record` prints after the run: a few lines a person reads at a glance.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/join/data_loss.h"
#include "gpuperf/status.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf::cli {

struct RecordTotals {
  uint32_t processes = 0;
  uint64_t kernels = 0;
  uint64_t kernel_ns = 0;
  uint64_t api_calls = 0;
  uint64_t memcpys = 0;
  uint64_t memcpy_bytes = 0;
  uint64_t memsets = 0;
  uint64_t launch_links = 0;
  uint64_t metric_ranges = 0;  // `gpuperf metrics`
  uint64_t pc_samples = 0;     // `record --pc-sampling`
  uint64_t links_with_stack = 0;
  uint64_t links_not_sampled = 0;  // linked to "[launch not sampled]" (--sample-launches)
  // What was lost: the same rows `report` shows (analyze/data_loss.h), from the same facts.
  DataLossSummary loss;
  uint64_t bytes_on_disk = 0;
  std::vector<int32_t> ranks;  // of processes a launcher named (torchrun, MPI, Slurm), sorted
  int32_t world_size = -1;
  uint64_t power_samples = 0;
  uint64_t clients_refused = 0;   // other CUPTI clients refused while gpuperf held CUPTI
  uint64_t nccl_collectives = 0;  // from NCCL's profiler plugin
  uint64_t nccl_comms = 0;        // distinct communicators
  // Trace files a process still writes (it outlived the command, or is another run's): not
  // unfinished, not ended at all.
  std::vector<ReadReport::BeingRecorded> being_recorded;
  std::vector<uint32_t> finished_pids;  // processes whose trace holds their final flush
  uint64_t longest_cuda_ns = 0;         // the longest a finished process ran after CUDA started
  bool FinishedProcess(uint32_t pid) const {
    return std::find(finished_pids.begin(), finished_pids.end(), pid) != finished_pids.end();
  }
};

// Streams the traces in `dir` and totals them.
Result<RecordTotals> SummarizeRecording(const std::string& dir);

// `note`: lines of the caller's, put before the closing "next:" line.
std::string FormatRecordSummary(const RecordTotals& totals, const std::string& dir,
                                const std::string& note = "");

// One line when a capture range (record --delay/--duration) held no kernel, saying whether the
// program ended before the range began; "" otherwise. A user who sets the range too early for
// a program's set-up (PyTorch's takes seconds after cuInit) would else see only zeros.
std::string DescribeEmptyRange(const RecordTotals& totals, double delay_s, double duration_s);

}  // namespace gpuperf::cli
