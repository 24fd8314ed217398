#include "export/parquet/dataset_export.h"

#include <array>
#include <filesystem>
#include <fstream>

#include "base/json_output.h"
#include "export/parquet/parquet_file.h"

namespace gpuperf::parquet {

namespace fs = std::filesystem;

// The files of one trace file's part: one per table, opened at its first batch; tables
// without rows get an empty file at Close(), so every partition holds every table's schema.
class PartWriter final : public DatasetPartSink {
 public:
  PartWriter(DatasetWriter& owner, DatasetPart part) : owner_(owner), part_(std::move(part)) {}

  Status Write(DatasetTable table, const TableBatch& batch) override {
    GP_ASSIGN_OR_RETURN(ParquetFileWriter * file, File(table));
    return file->AddPage(batch);
  }

  Status Close() override {
    for (DatasetTable table : AllDatasetTables()) {
      GP_ASSIGN_OR_RETURN(ParquetFileWriter * file, File(table));
      GP_RETURN_IF_ERROR(file->Close());
      owner_.Count(file->bytes_written());
    }
    return Status::Ok();
  }

 private:
  Result<ParquetFileWriter*> File(DatasetTable table) {
    std::unique_ptr<ParquetFileWriter>& file = files_[static_cast<size_t>(table)];
    if (file == nullptr) {
      const TableSpec& spec = DatasetTableSpec(table);
      const fs::path dir =
          fs::path(owner_.dir_) / spec.name / ("rank=" + std::to_string(part_.rank));
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec) {
        return Error(StatusCode::kIoError, "cannot create " + dir.string() + ": " + ec.message());
      }
      KeyValues metadata = {
          {"gpuperf.schema_version", std::to_string(kDatasetSchemaVersion)},
          {"gpuperf.table", std::string(spec.name)},
          {"gpuperf.trace_file", part_.trace_file},
      };
      GP_ASSIGN_OR_RETURN(file, ParquetFileWriter::Create(
                                    (dir / (part_.stem + ".parquet")).string(), spec, metadata));
    }
    return file.get();
  }

  DatasetWriter& owner_;
  DatasetPart part_;
  std::array<std::unique_ptr<ParquetFileWriter>, kDatasetTableCount> files_;
};

Result<std::unique_ptr<DatasetWriter>> DatasetWriter::Create(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) {
      return Error(StatusCode::kInvalidArgument,
                   dir + " exists and is not a directory: a Parquet dataset is a directory");
    }
    const bool ours = fs::exists(fs::path(dir) / kManifestName, ec);
    if (!ours && !fs::is_empty(dir, ec)) {
      return Error(StatusCode::kInvalidArgument,
                   dir +
                       " is not empty and holds no gpuperf dataset: give a new or empty "
                       "directory");
    }
    for (DatasetTable table : AllDatasetTables()) {
      fs::remove_all(fs::path(dir) / DatasetTableSpec(table).name, ec);
      if (ec) return Error(StatusCode::kIoError, "cannot replace " + dir + ": " + ec.message());
    }
    fs::remove(fs::path(dir) / kManifestName, ec);
  }
  fs::create_directories(dir, ec);
  if (ec) return Error(StatusCode::kIoError, "cannot create " + dir + ": " + ec.message());
  return std::unique_ptr<DatasetWriter>(new DatasetWriter(dir));
}

Result<std::unique_ptr<DatasetPartSink>> DatasetWriter::OpenPart(const DatasetPart& part) {
  return std::unique_ptr<DatasetPartSink>(new PartWriter(*this, part));
}

void DatasetWriter::Count(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  bytes_ += bytes;
  ++files_;
}

uint64_t DatasetWriter::bytes_written() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

uint64_t DatasetWriter::files_written() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return files_;
}

Status DatasetWriter::Finish(const DatasetSummary& summary, const std::string& trace_path) {
  nlohmann::ordered_json doc;
  doc["schema_version"] = kDatasetSchemaVersion;
  doc["generator"] = "gpuperf export --format parquet";
  doc["trace"] = trace_path;
  nlohmann::ordered_json tables = nlohmann::ordered_json::object();
  for (DatasetTable table : AllDatasetTables()) {
    const TableSpec& spec = DatasetTableSpec(table);
    nlohmann::ordered_json entry;
    entry["rows"] = summary.rows[static_cast<size_t>(table)];
    entry["files"] = summary.parts.size();
    tables[std::string(spec.name)] = std::move(entry);
  }
  doc["tables"] = std::move(tables);
  nlohmann::ordered_json parts = nlohmann::ordered_json::array();
  for (const DatasetPart& part : summary.parts) {
    parts.push_back({{"trace_file", part.trace_file},
                     {"file", part.stem + ".parquet"},
                     {"pid", part.pid},
                     {"rank", part.rank}});
  }
  doc["parts"] = std::move(parts);
  nlohmann::ordered_json clocks = nlohmann::ordered_json::array();
  for (const HostClock& host : summary.clocks) {
    clocks.push_back({{"host", host.hostname},
                      {"method", ClockMethodName(host.method)},
                      {"offset_ns", host.offset_ns},
                      {"uncertainty_ns", host.uncertainty_ns},
                      {"collectives", host.collectives}});
  }
  doc["clocks"] = std::move(clocks);
  doc["warnings"] = summary.warnings;
  const fs::path path = fs::path(dir_) / kManifestName;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << DumpJson(std::move(doc), 2) << '\n';
  out.close();
  if (!out) return Error(StatusCode::kIoError, "cannot write " + path.string());
  return Status::Ok();
}

}  // namespace gpuperf::parquet
