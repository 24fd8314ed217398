// Where live pages are kept, and how a process is told alive.
//
// Pages live in one directory per user: $GPUPERF_LIVE_DIR when set, else
// /dev/shm/gpuperf-<uid> (memory-backed on every Linux), else /tmp/gpuperf-<uid>. The
// directory is 0700 and must belong to the user (never a symlink), so no other user can
// plant, read or remove a page; each page is <pid>.live, mode 0600.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpuperf/status.h"

namespace gpuperf::live {

// The directory of the calling user's pages (not created).
std::string DefaultLiveDir();

// For the writer: creates `dir` (0700) if missing; an error when it exists but is not a
// directory of this user that others cannot write.
Status PrepareLiveDir(const std::string& dir);

// For readers: the page directories to scan. The user's own; for root, every user's under
// /dev/shm and /tmp as well (each must still belong to its user).
std::vector<std::string> ReaderLiveDirs();

// "<dir>/<pid>.live"
std::string PagePath(const std::string& dir, uint32_t pid);

// The pid a page file name stands for; 0 when the name is not "<pid>.live".
uint32_t PidOfPageName(const std::string& name);

enum class Liveness {
  kAlive,
  kGone,    // no such process, or a zombie
  kReused,  // the pid now belongs to a process that started at another time
};

// /proc/<pid>/stat's starttime (clock ticks after boot); 0 when the process does not exist.
// `zombie` (optional) is set when it has exited and waits to be reaped.
uint64_t ProcessStartTicks(uint32_t pid, bool* zombie = nullptr);

// Whether the process that wrote a page (pid, start_ticks) still runs. start_ticks 0 (not
// known yet) checks the pid alone.
Liveness CheckLiveness(uint32_t pid, uint64_t start_ticks);

}  // namespace gpuperf::live
