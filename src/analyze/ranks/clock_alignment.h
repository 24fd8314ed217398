// One timeline for processes of several hosts. Timestamps are each host's
// CLOCK_MONOTONIC (nanoseconds since its boot): processes of one boot share it exactly;
// other hosts' clocks are unrelated. Two steps put them on the clock of a reference host
// (the one of the lowest rank):
//  1. anchors: every process records (CLOCK_MONOTONIC, CLOCK_REALTIME) pairs, so wall-clock
//     time (NTP-synchronized, usually within a millisecond or so) maps each host's clock;
//  2. collectives: a collective ends at nearly the same moment on every rank (each waits
//     for the others' data), so the median difference of matched NCCL kernel ends between
//     two hosts corrects the anchors; the spread of those differences is the uncertainty,
//     the largest of them how far one collective disagreed. Collectives are matched by
//     NCCL's (communicator, operation, sequence number) when its profiler plugin recorded
//     them on every rank, else by kernel order (collectives.h).
// The method, the uncertainty and the fit are kept per host and shown; a large one is
// warned about.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyze/ranks/collectives.h"
#include "analyze/ranks/rank_scan.h"

namespace gpuperf {

enum class ClockMethod : uint8_t {
  kReference,    // the reference host's own clock
  kWallClock,    // anchors only (no collective seen on both hosts)
  kCollectives,  // anchors refined on matched collectives
  kUnaligned,    // no anchors at all: left as recorded
};

const char* ClockMethodName(ClockMethod method);

// Warn when a host's alignment may be off by more than this.
inline constexpr uint64_t kClockWarnNs = 100'000;

struct HostClock {
  std::string domain;  // ProcessIdentity::clock_domain()
  std::string hostname;
  std::vector<uint32_t> pids;
  ClockMethod method = ClockMethod::kReference;
  int64_t offset_ns = 0;         // added to this host's timestamps
  int64_t anchor_offset_ns = 0;  // what the wall-clock anchors alone said
  // How far off the offset may be: the spread of the collective ends it was refined on;
  // unknown (-1) with anchors only (NTP's accuracy, which gpuperf cannot see).
  int64_t uncertainty_ns = 0;
  uint32_t collectives = 0;  // matched collectives the refinement used
  // How well the offset fits them: the largest difference between one collective's end
  // time difference and the offset's (-1: not refined on collectives).
  int64_t max_deviation_ns = -1;
};

struct ClockAlignment {
  std::vector<HostClock> hosts;  // hosts[0] is the reference; empty: one host
  std::vector<std::string> warnings;
  // Collectives were matched across hosts by NCCL's sequence numbers (the profiler plugin
  // described every rank's), not by kernel order.
  bool matched_by_sequence = false;

  // True when every timestamp stays as recorded (one clock, or nothing to align).
  bool identity() const;
  int64_t OffsetOf(uint32_t pid) const;

 private:
  friend ClockAlignment AlignClocks(const RankScan&, const MatchedCollectives*);
  std::map<uint32_t, int64_t> offset_by_pid_;
};

// Aligns the hosts of `scan`. `collectives` (times as recorded, may be null) refines the
// wall-clock anchors where instances span the reference host and another.
ClockAlignment AlignClocks(const RankScan& scan, const MatchedCollectives* collectives);

// The number of distinct clocks (boot ids, else host names) among the scan's processes.
size_t ClockDomains(const RankScan& scan);

}  // namespace gpuperf
