// `gpuperf export --format parquet`'s analysis: a trace file or a job's directory of them
// as the rows of the dataset's tables (dataset_schema.h), one partition per trace file,
// handed to a DatasetSink. Every process is put on the job's one clock first
// (ranks/clock_alignment.h), so times of every table compare across hosts.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "analyze/dataset/dataset_schema.h"
#include "analyze/dataset/dataset_sink.h"
#include "analyze/ranks/clock_alignment.h"
#include "analyze/symbols/symbol_table.h"
#include "gpuperf/status.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

struct DatasetOptions {
  unsigned threads = 0;  // files read at once; 0: one per core
  // How the stacks and frames tables name frames: as the flame graph does with the same
  // options (the PyTorch view unless native_detail).
  StackDisplayOptions display;
};

struct DatasetSummary {
  std::array<uint64_t, kDatasetTableCount> rows{};
  std::vector<DatasetPart> parts;  // in file order
  std::vector<HostClock> clocks;   // empty: one clock
  std::vector<std::string> warnings;
};

// Reads FILE or DIR (each file once, the directory's rules: format/trace_directory.h). A file
// that cannot be read is left out with a warning, and the others are still written; an
// input that has no readable file at all is an error.
Result<DatasetSummary> BuildDataset(const std::string& path, DatasetSink& sink,
                                    const DatasetOptions& options, ReadReport* report);

}  // namespace gpuperf
