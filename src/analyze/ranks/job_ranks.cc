#include "analyze/ranks/job_ranks.h"

#include "analyze/ranks/ranks_analysis.h"
#include "format/trace_files.h"

namespace gpuperf {
namespace {

JobRanks FinishJob(const RankScan& scan, std::vector<RankPartial> partials) {
  JobRanks out;
  out.clocks = AlignRanks(scan, partials);
  out.model = FinishRanks(scan, out.clocks, partials, /*shift=*/true);
  out.partials = std::move(partials);
  return out;
}

}  // namespace

Result<JobRanks> AnalyzeJobRanks(const std::string& path, const RankScan& scan, unsigned threads) {
  ReadReport listing;
  GP_ASSIGN_OR_RETURN(std::vector<std::string> files, TraceFilesOf(path, listing));
  std::vector<std::vector<RankPartial>> per_file(files.size());
  std::vector<Status> status(files.size());
  ReadOptions read_options;
  read_options.chunk_types = RankPartialChunkTypes(scan);
  read_options.threads = ReadThreadsPerFile(files.size());
  ForEachIndex(files.size(), threads, [&](size_t i) {
    RanksSink sink(scan);
    ReadReport ignored;
    status[i] = ReadTraceWith(files[i], read_options, sink, &ignored);
    if (status[i].ok()) per_file[i] = sink.TakePartials();
  });
  std::vector<RankPartial> partials;
  std::map<uint32_t, std::vector<size_t>> files_of_pid;
  for (size_t i = 0; i < files.size(); ++i) {
    if (files.size() == 1 && !status[i].ok()) return status[i];
    for (RankPartial& p : per_file[i]) {
      files_of_pid[p.pid].push_back(i);
      partials.push_back(std::move(p));
    }
  }
  // A pid in two files (a process's flight-recorder windows) is one process: its parts are
  // put together, as one reading of the directory would have seen them.
  std::stable_sort(partials.begin(), partials.end(),
                   [](const RankPartial& a, const RankPartial& b) { return a.pid < b.pid; });
  std::vector<RankPartial> merged;
  for (RankPartial& p : partials) {
    if (merged.empty() || merged.back().pid != p.pid) {
      merged.push_back(std::move(p));
    } else {
      MergeRankPartial(merged.back(), std::move(p));
    }
  }
  JobRanks out = FinishJob(scan, std::move(merged));
  out.files = std::move(files);
  out.files_of_pid = std::move(files_of_pid);
  return out;
}

JobRanks AnalyzeJobRanks(const Trace& trace, const RankScan& scan) {
  return FinishJob(scan, RankPartials(trace, scan));
}

Result<ClockAlignment> AlignTraceClocks(const std::string& path, const RankScan& scan) {
  if (ClockDomains(scan) < 2) return ClockAlignment();
  GP_ASSIGN_OR_RETURN(JobRanks job, AnalyzeJobRanks(path, scan));
  return std::move(job.clocks);
}

ClockAlignment AlignTraceClocks(const Trace& trace, const RankScan& scan) {
  if (ClockDomains(scan) < 2) return ClockAlignment();
  return AlignRanks(scan, RankPartials(trace, scan));
}

Result<RanksModel> AnalyzeRanks(const std::string& path) {
  GP_ASSIGN_OR_RETURN(RankScan scan, ScanRanks(path));
  GP_ASSIGN_OR_RETURN(JobRanks job, AnalyzeJobRanks(path, scan));
  return std::move(job.model);
}

RanksModel AnalyzeRanks(const Trace& trace) {
  RankScan scan = ScanRanks(trace);
  return AnalyzeJobRanks(trace, scan).model;
}

}  // namespace gpuperf
