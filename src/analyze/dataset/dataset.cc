#include "analyze/dataset/dataset.h"

#include <algorithm>
#include <filesystem>

#include "analyze/dataset/part_builder.h"
#include "analyze/ranks/clock_shift_sink.h"
#include "analyze/ranks/job_ranks.h"
#include "format/trace_files.h"

namespace gpuperf {
namespace {

std::string PartStem(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  if (name.size() > 4 && name.ends_with(".gpt")) name.resize(name.size() - 4);
  for (char& c : name) {
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    if (!kept) c = '_';
  }
  return name.empty() || name[0] == '.' || name[0] == '_' ? "trace" + name : name;
}

// The part of one file, or why it could not be written.
struct PartOutcome {
  DatasetPart part;
  std::array<uint64_t, kDatasetTableCount> rows{};
  ReadReport read;
  Status status;
};

PartOutcome BuildPart(const std::string& file, size_t index, const RankScan& scan,
                      const ClockAlignment& clocks, unsigned read_threads,
                      const StackDisplayOptions& display, DatasetSink& sink) {
  PartOutcome out;
  out.part.trace_file = std::filesystem::path(file).filename().string();
  out.part.stem = PartStem(file);
  std::unique_ptr<PartRowBuilder> builder;
  Correlator correlator([&builder](const GpuActivity& a) { builder->OnActivity(a); });
  // Stack and frame ids: unique in the dataset, whatever the number of files.
  builder = std::make_unique<PartRowBuilder>(correlator, scan, clocks, sink, out.part,
                                             static_cast<int64_t>(index + 1) << 32, display);
  ReadOptions first_pass;
  first_pass.chunk_types = PartFirstPassChunks();
  first_pass.threads = read_threads;
  ReadReport first;
  out.status = ReadTraceAligned(file, clocks, *builder, &first, first_pass);
  if (out.status.ok()) {
    builder->BeginSecondPass();
    ReadOptions second_pass;
    second_pass.threads = read_threads;
    out.status = ReadTraceAligned(file, clocks, *builder, &out.read, second_pass);
  }
  if (!out.status.ok()) return out;
  correlator.Finish();
  out.status = builder->Finish();
  out.rows = builder->rows();
  out.part = builder->part();
  return out;
}

}  // namespace

Result<DatasetSummary> BuildDataset(const std::string& path, DatasetSink& sink,
                                    const DatasetOptions& options, ReadReport* report) {
  ReadReport local;
  ReadReport& read = report ? *report : local;
  GP_ASSIGN_OR_RETURN(RankScan scan, ScanRanks(path));
  GP_ASSIGN_OR_RETURN(ClockAlignment clocks, AlignTraceClocks(path, scan));
  GP_ASSIGN_OR_RETURN(std::vector<std::string> files, TraceFilesOf(path, read));
  std::vector<PartOutcome> outcomes(files.size());
  const unsigned read_threads = ReadThreadsPerFile(files.size());
  ForEachIndex(files.size(), options.threads, [&](size_t i) {
    outcomes[i] = BuildPart(files[i], i, scan, clocks, read_threads, options.display, sink);
  });

  DatasetSummary summary;
  summary.clocks = clocks.hosts;
  summary.warnings = scan.warnings;
  summary.warnings.insert(summary.warnings.end(), clocks.warnings.begin(), clocks.warnings.end());
  size_t written = 0;
  Status first_error;
  for (PartOutcome& o : outcomes) {
    read.warnings.insert(read.warnings.end(), o.read.warnings.begin(), o.read.warnings.end());
    read.files += o.read.files;
    read.records_read += o.read.records_read;
    read.bytes_truncated += o.read.bytes_truncated;
    read.chunks_corrupt += o.read.chunks_corrupt;
    if (!o.status.ok()) {
      read.warnings.push_back("skipped " + o.status.message());
      ++read.files_skipped;
      if (first_error.ok()) first_error = o.status;
      continue;
    }
    ++written;
    for (size_t t = 0; t < kDatasetTableCount; ++t) summary.rows[t] += o.rows[t];
    summary.parts.push_back(std::move(o.part));
  }
  if (written == 0) return first_error;
  return summary;
}

}  // namespace gpuperf
