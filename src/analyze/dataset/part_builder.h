// The rows of one trace file (one partition of the dataset, dataset_schema.h): a RecordSink
// read twice. The first pass takes the launch links and stacks (and who the file's process
// is), so that in the second every kernel, copy and set joins its launch through the
// Correlator as it arrives and becomes a row at once: memory stays at one batch per table
// plus the link table, whatever the trace's size. What needs the whole file (processes,
// ranks, devices, collectives matched by order, stacks and frames named through the symbols
// appended at its end) is written at Finish().
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analyze/dataset/dataset_schema.h"
#include "analyze/dataset/dataset_sink.h"
#include "analyze/dataset/table_batch.h"
#include "analyze/join/correlation.h"
#include "analyze/join/launch_sink.h"
#include "analyze/ranks/clock_alignment.h"
#include "analyze/ranks/rank_scan.h"
#include "base/demangle.h"

namespace gpuperf {

// Rows per batch, and so per data page of the files written: a writer encodes each batch
// as it fills, while its columns (a quarter of a megabyte each) are still in the cache, and
// puts fifteen of them in a row group (export/parquet/parquet_file.h).
inline constexpr size_t kDatasetBatchRows = 8'192;

// The record types of the first pass: processes, launch links, ranks, stacks.
std::span<const uint16_t> PartFirstPassChunks();

class PartRowBuilder final : public LaunchSink {
 public:
  // `id_base` makes the part's stack and frame ids unique in the dataset.
  PartRowBuilder(Correlator& correlator, const RankScan& scan, const ClockAlignment& clocks,
                 DatasetSink& sink, DatasetPart part, int64_t id_base,
                 const StackDisplayOptions& display = {});

  // The links are all in: records from now on join on arrival.
  void BeginSecondPass();
  // Called by the Correlator for each joined activity.
  void OnActivity(const GpuActivity& activity);
  // Writes what needed the whole file and closes the part.
  Status Finish();

  const std::array<uint64_t, kDatasetTableCount>& rows() const { return rows_; }
  const DatasetPart& part() const { return part_; }

  void OnString(StringId id, std::string_view text) override;
  void OnStack(const StackRecord& stack) override;
  void OnProcess(std::span<const ProcessRecord> records) override;
  void OnLaunchLink(std::span<const LaunchLinkRecord> records) override;
  void OnRank(std::span<const RankRecord> records) override;
  void OnDevice(std::span<const DeviceRecord> records) override;
  void OnKernel(std::span<const KernelRecord> records) override;
  void OnMemcpy(std::span<const MemcpyRecord> records) override;
  void OnMemset(std::span<const MemsetRecord> records) override;
  void OnApi(std::span<const ApiRecord> records) override;
  void OnSync(std::span<const SyncRecord> records) override;
  void OnMemory(std::span<const MemoryRecord> records) override;
  void OnNvtx(std::span<const NvtxRecord> records) override;
  void OnCpuSample(std::span<const CpuSampleRecord> records) override;
  void OnOffCpu(std::span<const OffCpuRecord> records) override;
  void OnPowerSample(std::span<const PowerSampleRecord> records) override;
  void OnNcclCollective(std::span<const NcclCollectiveRecord> records) override;
  void OnNcclComm(std::span<const NcclCommRecord> records) override;

 private:
  struct Who {
    uint32_t host = 0;
    int64_t rank = -1;
  };
  struct KernelNames {
    bool known = false;
    uint32_t name = 0, demangled = 0, short_name = 0, communication = 0;  // pool ids
  };
  struct CommKernel {
    uint32_t pid = 0, device = 0, stream = 0, name = 0, operation = 0, correlation_id = 0;
    uint64_t start_ns = 0, end_ns = 0;
  };

  // A row of `table` for a record of `pid`, its first three columns written.
  RowAppender Row(DatasetTable table, uint32_t pid);
  Status Flush(DatasetTable table);
  uint32_t Text(StringId id);            // a trace string, as valid UTF-8
  uint32_t Literal(std::string_view s);  // any other string
  // A name of the program's own (an enum's, a join's): pooled once per row kind, not per row.
  uint32_t Fixed(std::string_view name);
  const KernelNames& NamesOf(StringId kernel);
  int64_t StackIdOf(StackId stack, uint32_t tid);
  void LaunchColumns(RowAppender& row, const GpuActivity& a);
  void KernelRow(const GpuActivity& a, const KernelRecord& k);
  void MemcpyRow(const GpuActivity& a, const MemcpyRecord& m);
  void MemsetRow(const GpuActivity& a, const MemsetRecord& m);
  void WriteCollectives();
  void WriteProcesses();
  void WriteStacksAndFrames();

  StackDisplayOptions display_;  // how frames are named (the flame graph's options)
  const RankScan& scan_;
  const ClockAlignment& clocks_;
  DatasetSink& sink_;
  DatasetPart part_;
  int64_t id_base_;
  bool second_pass_ = false;
  std::unique_ptr<DatasetPartSink> out_;
  Status status_;

  StringPool pool_;
  std::vector<uint32_t> pool_of_string_;  // by StringId; 0: not pooled yet
  std::unordered_map<uint32_t, Who> who_;
  std::vector<KernelNames> kernel_names_;            // by StringId
  std::array<uint32_t, 4> join_names_{};             // by LaunchJoin: pool ids, 0 until first used
  std::unordered_map<const char*, uint32_t> fixed_;  // by the name's address
  DemangleCache demangle_;
  std::array<TableBatch, kDatasetTableCount> batches_;
  std::array<uint64_t, kDatasetTableCount> rows_{};

  // The current OnKernel/OnMemcpy/OnMemset batch: the Correlator emits in arrival order.
  std::span<const KernelRecord> kernel_batch_;
  std::span<const MemcpyRecord> memcpy_batch_;
  std::span<const MemsetRecord> memset_batch_;
  uint64_t kernels_before_ = 0, memcpys_before_ = 0, memsets_before_ = 0;

  std::map<std::pair<StackId, uint32_t>, int64_t> stack_ids_;  // (stack, tid) -> local id
  struct RecentStack {
    uint64_t key = 0;      // stack << 32 | tid
    int64_t local_id = 0;  // 0: empty
  };
  std::array<RecentStack, 256> recent_stacks_{};
  std::vector<RankRecord> ranks_;
  std::vector<DeviceRecord> devices_;
  std::vector<CommKernel> comm_kernels_;
  std::vector<NcclCollectiveRecord> nccl_calls_;
  std::map<uint64_t, int32_t> nccl_comm_ranks_;  // communicator -> ranks
};

}  // namespace gpuperf
