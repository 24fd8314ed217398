// The dataset of `gpuperf export --format parquet` on disk (docs/parquet.md):
//
//   DIR/_gpuperf.json                        what was written: schema version, tables, rows
//   DIR/<table>/rank=<R>/<trace file>.parquet one file per table and trace file
//
// Each table is a directory, Hive-partitioned by rank (-1: a process that is no rank), so an
// engine reads a whole job from a directory or object store as one table per name. The rows
// come from the analysis (analyze/dataset/dataset.h); this only serializes them.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "analyze/dataset/dataset.h"
#include "analyze/dataset/dataset_sink.h"
#include "gpuperf/status.h"

namespace gpuperf::parquet {

// The name of the dataset's description file; Hive and Spark skip names beginning with '_'.
inline constexpr const char* kManifestName = "_gpuperf.json";

class DatasetWriter final : public DatasetSink {
 public:
  // Makes `dir` ready: a new or empty directory, or a dataset gpuperf wrote before (its
  // tables are removed first); anything else is refused rather than mixed with.
  static Result<std::unique_ptr<DatasetWriter>> Create(const std::string& dir);

  Result<std::unique_ptr<DatasetPartSink>> OpenPart(const DatasetPart& part) override;

  // Writes the description file, once the analysis is done.
  Status Finish(const DatasetSummary& summary, const std::string& trace_path);

  uint64_t bytes_written() const;
  uint64_t files_written() const;

 private:
  explicit DatasetWriter(std::string dir) : dir_(std::move(dir)) {}
  friend class PartWriter;
  void Count(uint64_t bytes);

  std::string dir_;
  mutable std::mutex mutex_;
  uint64_t bytes_ = 0, files_ = 0;
};

}  // namespace gpuperf::parquet
