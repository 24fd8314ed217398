// Per-host summaries of a job and their merge. A job whose traces cannot be copied to one
// place is reduced on each host (`gpuperf report DIR --summary`: the host's report plus its
// JobPart) and `gpuperf report` merges the summaries into the job's tables as it would
// build them from every trace: the ranks (clocks aligned across hosts, collectives matched,
// the straggler), the kernel, API, copy and set tables, the GPU time of each launch stack,
// and the totals. Counts and times merge exactly; what needs the records themselves (a
// median, idle gaps, memory over time, insights) is named in MergedJob::not_merged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyze/ranks/rank_partial.h"
#include "analyze/ranks/rank_scan.h"
#include "analyze/report/report_model.h"
#include "gpuperf/status.h"

namespace gpuperf {

// One launch path of the flame graph (GPU time): frames root first, below the frame of its
// process, which the flame graph of a job of several processes starts with.
struct StackWeight {
  std::string process;  // "[pid N] command"
  std::vector<std::string> frames;
  uint64_t gpu_ns = 0;
  uint64_t count = 0;  // GPU activities
};

struct JobPart {
  std::string name;                   // where it came from (a summary's file name)
  ReportModel report;                 // the host's report, unfiltered
  RankScan scan;                      // its processes, clock anchors, communicators
  std::vector<RankPartial> partials;  // its part of the ranks analysis, times as recorded
  std::vector<StackWeight> stacks;    // in the flame graph's order
};

// The part of FILE or DIR (one host's traces).
Result<JobPart> BuildJobPart(const std::string& path);

struct MergedJob {
  // Totals (summary), kernels (without medians), runtime and driver API, copies and sets,
  // ranks; the rest empty.
  ReportModel report;
  std::vector<StackWeight> stacks;  // summed per path, most GPU time first
  std::vector<std::string> not_merged;
  std::vector<std::string> warnings;  // of the parts (their read warnings), then the merge's
  size_t parts = 0;
};

// A part whose processes an earlier part holds already (the same summary given twice) is
// left out with a warning.
MergedJob MergeJobParts(std::vector<JobPart> parts);

}  // namespace gpuperf
