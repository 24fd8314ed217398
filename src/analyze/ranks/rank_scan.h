// A quick look at a trace (ReadTraceChunks) for what multi-rank analysis needs before it
// reads the records that carry time: each process's place in the job (RankRecord), its
// NCCL communicators (NcclCommRecord, from the profiler plugin), its
// host and command (ProcessRecord), which GPUs it made contexts on, its clock anchors
// (ClockRecord: CLOCK_MONOTONIC next to CLOCK_REALTIME) and its GPU power readings.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gpuperf/records.h"
#include "gpuperf/status.h"
#include "gpuperf/trace.h"

namespace gpuperf {

struct ProcessIdentity {
  uint32_t pid = 0;
  int32_t rank = -1;  // -1: no launcher named one (a launcher's own process, a plain run)
  int32_t local_rank = -1;
  int32_t world_size = -1;
  int32_t local_world_size = -1;
  int32_t node_rank = -1;
  std::string launcher, job_id, master, boot_id, visible_devices;
  std::string hostname, command;
  std::vector<uint32_t> devices;  // GPUs with a context, ascending
  std::vector<ClockRecord> clocks;

  bool is_rank() const { return rank >= 0; }
  // Processes with one key share one CLOCK_MONOTONIC: the boot id, else (traces without
  // one) the host name.
  std::string clock_domain() const { return boot_id.empty() ? "host " + hostname : boot_id; }
  // "rank 1 (node3, GPU 1)", or "pid 4242 (node3, GPU 0)" for a process that is not a rank.
  std::string Label() const;
};

// A communicator NCCL's profiler plugin saw (NcclCommRecord), merged over processes.
struct NcclComm {
  std::string name;
  int32_t nranks = 0;
};

struct RankScan {
  std::map<uint32_t, ProcessIdentity> processes;  // by pid
  std::map<uint64_t, NcclComm> nccl_comms;        // by hash; empty: no plugin records
  std::vector<PowerSampleRecord> power_samples;   // as recorded (each host's own clock)
  // Problems seen: a pid recorded on two hosts (the analysis keys processes by pid, so their
  // records are mixed), a rank claimed twice, ranks missing (CheckRanks).
  std::vector<std::string> warnings;

  bool any_rank() const;
  // Processes in rank order, then those without a rank in pid order.
  std::vector<const ProcessIdentity*> InRankOrder() const;
  const ProcessIdentity* Find(uint32_t pid) const;
};

// Adds to `scan.warnings` what does not add up among its ranks: a rank claimed by two
// processes, ranks of the job's world size without a trace. A process without a boot id (its
// rank record lost) on a host of one boot id gets that one. (RankScanSink::Finish runs it.)
void CheckRanks(RankScan& scan);

// The record types the scan reads (for ReadTraceChunks).
std::span<const uint16_t> RankScanChunkTypes();

// Reads FILE or DIR's processes, contexts, clocks, ranks and power samples only.
Result<RankScan> ScanRanks(const std::string& path);
// The same from a trace in memory.
RankScan ScanRanks(const Trace& trace);

// What a RecordSink needs to fill a RankScan; ScanRanks uses it, other passes may too.
class RankScanSink : public RecordSink {
 public:
  void OnString(StringId id, std::string_view text) override;
  void OnProcess(std::span<const ProcessRecord> records) override;
  void OnContext(std::span<const ContextRecord> records) override;
  void OnClock(std::span<const ClockRecord> records) override;
  void OnRank(std::span<const RankRecord> records) override;
  void OnPowerSample(std::span<const PowerSampleRecord> records) override;
  void OnNcclComm(std::span<const NcclCommRecord> records) override;
  RankScan Finish();

 private:
  ProcessIdentity& Process(uint32_t pid);
  std::string Str(StringId id) const;

  std::vector<std::string> strings_{std::string()};
  RankScan scan_;
};

}  // namespace gpuperf
