// Reads every live page (live_page.h) of the machine without ever waiting on a writer:
// each block is copied under its seqlock with bounded retries, a page whose process is
// gone (pid + start time) is skipped and removed, and one that cannot be read is said so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/live_page.h"
#include "format/live_seqlock.h"

namespace gpuperf::live {

enum class PageState {
  kOk,
  kBusy,     // some block stayed mid-write through every retry (the writer is stopped?)
  kStalled,  // alive, but not updated for kStalledAfterNs (stopped, hung, or exec'd away)
};

// "ok", "busy", "stalled".
const char* PageStateName(PageState state);

inline constexpr uint64_t kStalledAfterNs = 10ull * 1000000000ull;

struct ProcessSnapshot {
  std::string path;
  uint32_t pid = 0;
  PageState state = PageState::kOk;
  // Which blocks were read (a busy page may still have some).
  bool has_identity = false, has_counters = false, has_kernels = false, has_apis = false,
       has_ring = false, has_stats = false;
  Identity identity;
  Counters counters;
  Kernels kernels;
  Apis apis;
  std::unique_ptr<Ring> ring;
  Stats stats;
};

struct ScanOptions {
  std::vector<std::string> dirs;  // default: ReaderLiveDirs()
  uint32_t only_pid = 0;          // 0: every process
  bool remove_stale = true;       // unlink pages of processes that are gone (own files only)
  int tries = kDefaultReadTries;
};

struct ScanResult {
  std::vector<ProcessSnapshot> processes;  // by pid
  uint32_t stale = 0;                      // pages of processes that are gone, skipped
  uint32_t removed = 0;                    // ... and removed
  // One line per other page (or page directory) not read, and why; past 256, one last line
  // says how many more.
  std::vector<std::string> skipped;
  uint64_t skipped_unlisted = 0;
};

ScanResult ScanLivePages(const ScanOptions& options);

// CLOCK_MONOTONIC now, as the pages' times are.
uint64_t MonotonicNowNs();

}  // namespace gpuperf::live
