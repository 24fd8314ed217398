// The multi-rank analysis of a job's trace files, read in parallel: each file's kernels (and
// NCCL plugin records) reduced to its processes' partials on as many threads as the machine
// has cores, then the clocks aligned and the ranks model computed from the partials
// (ranks_analysis.h). One reading of the kernels gives both the clock alignment that every
// other reading applies and the report's ranks section.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analyze/ranks/clock_alignment.h"
#include "analyze/ranks/rank_partial.h"
#include "analyze/ranks/rank_scan.h"
#include "analyze/ranks/ranks_model.h"
#include "gpuperf/status.h"
#include "gpuperf/trace.h"

namespace gpuperf {

struct JobRanks {
  ClockAlignment clocks;
  RanksModel model;
  std::vector<RankPartial> partials;  // one per process, times as recorded
  std::vector<std::string> files;     // read, in order (a file itself: one)
  // Which of them hold each process's kernels or plugin calls (by pid).
  std::map<uint32_t, std::vector<size_t>> files_of_pid;
};

// FILE or DIR. A file that cannot be read is left out (the reading that follows says why).
Result<JobRanks> AnalyzeJobRanks(const std::string& path, const RankScan& scan,
                                 unsigned threads = 0);
JobRanks AnalyzeJobRanks(const Trace& trace, const RankScan& scan);

// The clock alignment of FILE or DIR: nothing to read when its processes share one clock;
// else its communication kernels refine the wall-clock anchors.
Result<ClockAlignment> AlignTraceClocks(const std::string& path, const RankScan& scan);
ClockAlignment AlignTraceClocks(const Trace& trace, const RankScan& scan);

// The whole analysis of FILE or DIR, or of a trace in memory.
Result<RanksModel> AnalyzeRanks(const std::string& path);
RanksModel AnalyzeRanks(const Trace& trace);

}  // namespace gpuperf
