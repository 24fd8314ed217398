// Where the dataset analysis sends its rows: per trace file, batches of each table. A writer
// (export/parquet/dataset_export.h) implements it; the analysis never knows the format.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "analyze/dataset/dataset_schema.h"
#include "analyze/dataset/table_batch.h"
#include "gpuperf/status.h"

namespace gpuperf {

// One trace file of the job: its rows form one partition of every table.
struct DatasetPart {
  std::string trace_file;  // as read
  std::string stem;        // its name without ".gpt", reduced to [A-Za-z0-9._-]
  int32_t rank = -1;       // of the file's process; -1 when it is no rank
  uint32_t pid = 0;
};

class DatasetPartSink {
 public:
  virtual ~DatasetPartSink() = default;
  virtual Status Write(DatasetTable table, const TableBatch& batch) = 0;
  // Every row is written; tables that got none are still due (empty, with their schema).
  virtual Status Close() = 0;
};

class DatasetSink {
 public:
  virtual ~DatasetSink() = default;
  // Called from the analysis's worker threads, one part at a time on each.
  virtual Result<std::unique_ptr<DatasetPartSink>> OpenPart(const DatasetPart& part) = 0;
};

}  // namespace gpuperf
