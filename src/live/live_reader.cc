#include "live/live_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/process_owner.h"
#include "format/live_dir.h"

namespace gpuperf::live {
namespace {

// Any page a gpuperf could write: version 1 is 82 KiB and grows only by blocks at its end.
// Never read past sizeof(Page) anyway: the bound is for saying "not a page".
constexpr uint64_t kMaxPageBytes = 16ull << 20;
// What one directory may cost a scan: a user who fills theirs with names cannot make root's
// `top` or `serve` read without end.
constexpr size_t kMaxEntriesPerDir = 65536;
constexpr size_t kMaxPagesPerDir = 4096;
// Tries for a block once its page (or enough of the directory's pages) turned out busy: a
// writer is inside one block at a time, and a user whose every page is mid-write must not
// cost each scan 20 ms a page.
constexpr int kQuickTries = 4;
constexpr int kBusyPagesBeforeQuickTries = 4;

// Lines of what was skipped, at most this many: a user who makes ten thousand directories or
// pages does not make ten thousand lines.
constexpr size_t kMaxSkippedLines = 256;

void Skip(ScanResult& result, std::string line) {
  if (result.skipped.size() < kMaxSkippedLines) {
    result.skipped.push_back(std::move(line));
  } else {
    result.skipped_unlisted++;
  }
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// What a file that is not a regular file is, for the line that says it was skipped.
const char* KindOf(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

// One page directory being read: its open descriptor (every page is opened under it, so a
// directory renamed or replaced after it was checked changes nothing), its path for the
// lines, and the user whose pages it holds.
struct LiveDirectory {
  int fd = -1;
  std::string path;
  uid_t owner = 0;
  int busy_pages = 0;
};

// Opens a page directory; -1 (after a line in `skipped`, unless it does not exist) when it is
// not one to read: not a directory, a symbolic link (default directories only), another
// user's than its name says, or writable by others.
int OpenLiveDir(const LiveDirToRead& dir, uid_t* owner, ScanResult& result) {
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | (dir.owner ? O_NOFOLLOW : 0);
  const int fd = open(dir.path.c_str(), flags);
  if (fd < 0) {
    if (errno == ELOOP) {
      Skip(result, dir.path + ": a symbolic link, not followed");
    } else if (errno == ENOTDIR) {
      Skip(result, dir.path + ": not a directory");
    } else if (errno != ENOENT) {
      Skip(result, dir.path + ": " + std::strerror(errno));
    }
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return -1;
  }
  const std::string why = WhyNotPrivateDir(st, dir.owner);
  if (!why.empty()) {
    Skip(result, dir.path + why + ": not read");
    close(fd);
    return -1;
  }
  *owner = st.st_uid;
  return fd;
}

// Skips (and when allowed, removes) the page of a process that is gone.
void DropStale(const LiveDirectory& dir, const std::string& name, uid_t file_owner,
               const ScanOptions& options, ScanResult& result) {
  result.stale++;
  // Only our own files: root reading other users' directories leaves their pages alone.
  if (options.remove_stale && file_owner == geteuid() && unlinkat(dir.fd, name.c_str(), 0) == 0) {
    result.removed++;
  }
}

// Opens page `name` of `dir` to read, never following a link nor waiting on a FIFO or a
// device: a regular file of the directory's user, no larger than a page can be. -1 when it
// is not one (said in `skipped`), or is gone (said nowhere: a page being removed). `st` is
// the open file's.
int OpenPage(const LiveDirectory& dir, const std::string& name, const std::string& path,
             struct stat& st, ScanResult& result) {
  // Look before opening: opening a FIFO or a device can block or do things.
  if (fstatat(dir.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return -1;
  if (!S_ISREG(st.st_mode)) {
    Skip(result, path + ": " + KindOf(st.st_mode) + ", not a live page");
    return -1;
  }
  const int fd =
      openat(dir.fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) Skip(result, path + ": " + std::strerror(errno));
    return -1;
  }
  struct stat opened;
  // The same file that was looked at (not one swapped in since).
  if (fstat(fd, &opened) != 0 || opened.st_dev != st.st_dev || opened.st_ino != st.st_ino ||
      !S_ISREG(opened.st_mode)) {
    Skip(result, path + ": replaced while it was opened");
    close(fd);
    return -1;
  }
  st = opened;
  if (st.st_uid != dir.owner) {
    Skip(result, path + ": belongs to uid " + std::to_string(st.st_uid) + ", not to uid " +
                     std::to_string(dir.owner) + " whose directory it is in");
  } else if (static_cast<uint64_t>(st.st_size) > kMaxPageBytes) {
    Skip(result, path + ": " + std::to_string(st.st_size) + " bytes, more than a live page can be");
  } else {
    return fd;
  }
  close(fd);
  return -1;
}

// A process of another user than the directory's cannot have written a page there: a page
// naming one is a forgery (the pid and start time in a page are the writer's word only).
// Root's own pages are trusted (no one else can write root's directory), so a program root
// started that later changed its user still shows.
bool ProcessIsTheDirectorysUser(const LiveDirectory& dir, uint32_t pid, const std::string& path,
                                ScanResult& result) {
  if (dir.owner == 0) return true;
  const std::optional<ProcessOwner> owner = ReadProcessOwner(pid);
  if (!owner) return true;  // gone meanwhile: the liveness check says so
  if (owner->RunsAs(dir.owner)) return true;
  Skip(result, path + ": names pid " + std::to_string(pid) + ", a process of uid " +
                   std::to_string(owner->uids[1]) + ", not of uid " + std::to_string(dir.owner));
  return false;
}

// Reads the blocks of an open page. A block that stays mid-write through every try leaves the
// page busy; the blocks after it get only a few tries.
template <class T>
bool ReadBlock(int fd, size_t offset, T& out, int& tries, bool& short_read) {
  const BlockRead read = SeqlockReadFile(fd, offset, out, tries);
  if (read == BlockRead::kBusy) tries = std::min(tries, kQuickTries);
  if (read == BlockRead::kShort) short_read = true;
  return read == BlockRead::kOk;
}

// Reads one page. Returns false when it is not shown (stale, or skipped with a reason).
bool ReadPage(LiveDirectory& dir, const std::string& name, uint32_t pid, const ScanOptions& options,
              ScanResult& result, ProcessSnapshot& out) {
  const std::string path = dir.path + "/" + name;
  struct stat st;
  const int opened = OpenPage(dir, name, path, st, result);
  if (opened < 0) return false;
  Fd fd(opened);
  if (CheckLiveness(pid, 0) != Liveness::kAlive) {
    DropStale(dir, name, st.st_uid, options, result);
    return false;
  }
  if (!ProcessIsTheDirectorysUser(dir, pid, path, result)) return false;
  if (static_cast<uint64_t>(st.st_size) < kHeaderBytes) return false;  // being created
  char magic[sizeof(kPageMagic)];
  if (!ReadExactly(fd.get(), magic, sizeof(magic), 0)) return false;  // truncated: going away
  if (std::memcmp(magic, kPageMagic, sizeof(kPageMagic)) != 0) {
    // All zeros: created, not announced yet.
    if (std::any_of(magic, magic + sizeof(magic), [](char c) { return c != 0; })) {
      Skip(result, path + ": not a live page (no page magic)");
    }
    return false;
  }
  // The header is written before the magic (release): read it after.
  std::atomic_thread_fence(std::memory_order_acquire);
  uint32_t header[2];  // version, page_bytes
  static_assert(offsetof(Page, version) == sizeof(kPageMagic) &&
                offsetof(Page, page_bytes) == sizeof(kPageMagic) + 4);
  if (!ReadExactly(fd.get(), header, sizeof(header), offsetof(Page, version))) return false;
  const uint32_t version = header[0], page_bytes = header[1];
  if (version != kLayoutVersion) {
    Skip(result, path + ": live page layout version " + std::to_string(version) +
                     " (this gpuperf reads " + std::to_string(kLayoutVersion) + ")");
    return false;
  }
  if (page_bytes < sizeof(Page) || static_cast<uint64_t>(st.st_size) < sizeof(Page)) {
    Skip(result, path + ": live page too small");
    return false;
  }
  if (page_bytes != static_cast<uint64_t>(st.st_size)) {
    Skip(result, path + ": " + std::to_string(st.st_size) + " bytes, not the page's own size (" +
                     std::to_string(page_bytes) + ")");
    return false;
  }
  out.path = path;
  out.pid = pid;
  int tries = dir.busy_pages >= kBusyPagesBeforeQuickTries ? std::min(options.tries, kQuickTries)
                                                           : options.tries;
  bool short_read = false;
  const int f = fd.get();
  out.has_identity = ReadBlock(f, offsetof(Page, identity), out.identity, tries, short_read);
  if (out.has_identity) {
    if (out.identity.pid != pid) {
      Skip(result, path + ": written by pid " + std::to_string(out.identity.pid));
      return false;
    }
    if (CheckLiveness(pid, out.identity.start_ticks) != Liveness::kAlive) {
      DropStale(dir, name, st.st_uid, options, result);
      return false;
    }
  }
  out.has_counters = ReadBlock(f, offsetof(Page, counters), out.counters, tries, short_read);
  out.has_kernels = ReadBlock(f, offsetof(Page, kernels), out.kernels, tries, short_read);
  out.has_apis = ReadBlock(f, offsetof(Page, apis), out.apis, tries, short_read);
  out.ring = std::make_unique<Ring>();
  out.has_ring = ReadBlock(f, offsetof(Page, ring), *out.ring, tries, short_read);
  out.has_stats = ReadBlock(f, offsetof(Page, stats), out.stats, tries, short_read);
  if (short_read) {
    Skip(result, path + ": truncated while it was read");
    return false;
  }
  const bool complete = out.has_identity && out.has_counters && out.has_kernels && out.has_apis &&
                        out.has_ring && out.has_stats;
  if (!complete) {
    out.state = PageState::kBusy;
    dir.busy_pages++;
  } else if (out.counters.updated_monotonic_ns + kStalledAfterNs < MonotonicNowNs() &&
             out.identity.start_monotonic_ns + kStalledAfterNs < MonotonicNowNs()) {
    out.state = PageState::kStalled;
  }
  return true;
}

// Reads the pages of one directory into `result`.
void ScanDirectory(const LiveDirToRead& where, const ScanOptions& options, ScanResult& result) {
  LiveDirectory dir;
  dir.path = where.path;
  dir.fd = OpenLiveDir(where, &dir.owner, result);
  if (dir.fd < 0) return;
  // fdopendir takes its own descriptor; dir.fd stays ours for openat.
  const int listing_fd = dup(dir.fd);
  DIR* listing = listing_fd >= 0 ? fdopendir(listing_fd) : nullptr;
  if (listing == nullptr) {
    if (listing_fd >= 0) close(listing_fd);
    close(dir.fd);
    return;
  }
  std::vector<std::pair<uint32_t, std::string>> pages;
  size_t entries = 0;
  bool cut = false;
  while (dirent* entry = readdir(listing)) {
    if (++entries > kMaxEntriesPerDir || pages.size() >= kMaxPagesPerDir) {
      cut = true;
      break;
    }
    const uint32_t pid = PidOfPageName(entry->d_name);
    if (pid != 0 && (options.only_pid == 0 || pid == options.only_pid)) {
      pages.emplace_back(pid, entry->d_name);
    }
  }
  closedir(listing);
  if (cut) {
    Skip(result, dir.path + ": more than " + std::to_string(kMaxPagesPerDir) + " pages or " +
                     std::to_string(kMaxEntriesPerDir) + " files; the rest not read");
  }
  for (const auto& [pid, name] : pages) {
    ProcessSnapshot snapshot;
    if (ReadPage(dir, name, pid, options, result, snapshot)) {
      result.processes.push_back(std::move(snapshot));
    }
  }
  close(dir.fd);
}

}  // namespace

const char* PageStateName(PageState state) {
  switch (state) {
    case PageState::kOk:
      return "ok";
    case PageState::kBusy:
      return "busy";
    case PageState::kStalled:
      return "stalled";
  }
  return "?";
}

uint64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

ScanResult ScanLivePages(const ScanOptions& options) {
  ScanResult result;
  std::vector<LiveDirToRead> dirs;
  for (const std::string& dir : options.dirs) dirs.push_back({dir, std::nullopt});
  if (dirs.empty()) dirs = ReaderLiveDirs();
  for (const LiveDirToRead& dir : dirs) ScanDirectory(dir, options, result);
  if (result.skipped_unlisted > 0) {
    result.skipped.push_back("and " + std::to_string(result.skipped_unlisted) +
                             " more pages or directories, not listed");
  }
  std::sort(result.processes.begin(), result.processes.end(),
            [](const ProcessSnapshot& a, const ProcessSnapshot& b) { return a.pid < b.pid; });
  return result;
}

}  // namespace gpuperf::live
