// Where live pages are kept, and how a process is told alive.
//
// Pages live in one directory per user: $GPUPERF_LIVE_DIR when set, else
// /dev/shm/gpuperf-<uid> (memory-backed on every Linux), else /tmp/gpuperf-<uid>. The
// directory is 0700 and must belong to the user (never a symlink), so no other user can
// plant, read or remove a page; each page is <pid>.live, mode 0600.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuperf/status.h"

namespace gpuperf::live {

// The directory of the calling user's pages (not created).
std::string DefaultLiveDir();

// For the writer: creates `dir` (0700) if missing; an error when it exists but is not a
// directory of this user that others cannot write.
Status PrepareLiveDir(const std::string& dir);

// A page directory for a reader, and whose it must be.
struct LiveDirToRead {
  std::string path;
  // The user it must belong to (its pages too): the uid in its name for the default
  // directories; unset for a directory named on the command line or in $GPUPERF_LIVE_DIR,
  // whose owner is taken as it is.
  std::optional<uid_t> owner;
};

// For readers: the page directories to scan. The user's own; for root, every user's under
// /dev/shm and /tmp as well (each must belong to the user its name says: the reader checks).
std::vector<LiveDirToRead> ReaderLiveDirs();

// What keeps `st` (lstat or fstat of a page directory) from being a directory of `uid` that
// no one else can write: "" when nothing, else " is a symbolic link", " belongs to uid N,
// not M", ... (to follow its path). `uid` unset: any owner.
std::string WhyNotPrivateDir(const struct stat& st, std::optional<uid_t> uid);

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
