#include "live/live_reader.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "live/live_dir.h"

namespace gpuperf::live {
namespace {

// A read-only mapping of one page file, unmapped when done.
class Mapping {
 public:
  ~Mapping() {
    if (data_ != nullptr) munmap(data_, bytes_);
  }
  // False when the file cannot be opened or is smaller than `min_bytes` (still being
  // created, or not a page).
  bool Open(const std::string& path, size_t min_bytes) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
              static_cast<uint64_t>(st.st_size) >= min_bytes;
    if (ok) {
      bytes_ = static_cast<size_t>(st.st_size);
      void* data = mmap(nullptr, bytes_, PROT_READ, MAP_SHARED, fd, 0);
      ok = data != MAP_FAILED;
      if (ok) data_ = data;
    }
    close(fd);
    return ok;
  }
  const void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

uid_t OwnerOf(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 ? st.st_uid : static_cast<uid_t>(-1);
}

// Skips (and when allowed, removes) the page of a process that is gone.
void DropStale(const std::string& path, const ScanOptions& options, ScanResult& result) {
  result.stale++;
  // Only our own files: root reading other users' directories leaves their pages alone.
  if (options.remove_stale && OwnerOf(path) == geteuid() && unlink(path.c_str()) == 0) {
    result.removed++;
  }
}

// Reads one page. Returns false when it is not shown (stale, or skipped with a reason).
bool ReadPage(const std::string& path, uint32_t pid, const ScanOptions& options, ScanResult& result,
              ProcessSnapshot& out) {
  if (CheckLiveness(pid, 0) != Liveness::kAlive) {
    DropStale(path, options, result);
    return false;
  }
  Mapping mapping;
  if (!mapping.Open(path, kHeaderBytes)) return false;  // being created
  const Page& page = *static_cast<const Page*>(mapping.data());
  if (std::memcmp(page.magic, kPageMagic, sizeof(kPageMagic)) != 0) return false;
  std::atomic_thread_fence(std::memory_order_acquire);
  if (page.version != kLayoutVersion) {
    result.skipped.push_back(path + ": live page layout version " + std::to_string(page.version) +
                             " (this gpuperf reads " + std::to_string(kLayoutVersion) + ")");
    return false;
  }
  if (page.page_bytes < sizeof(Page) || mapping.bytes() < sizeof(Page)) {
    result.skipped.push_back(path + ": live page too small");
    return false;
  }
  out.path = path;
  out.pid = pid;
  const int tries = options.tries;
  out.has_identity = SeqlockRead(page.identity, out.identity, tries);
  if (out.has_identity) {
    if (out.identity.pid != pid) {
      result.skipped.push_back(path + ": written by pid " + std::to_string(out.identity.pid));
      return false;
    }
    if (CheckLiveness(pid, out.identity.start_ticks) != Liveness::kAlive) {
      DropStale(path, options, result);
      return false;
    }
  }
  out.has_counters = SeqlockRead(page.counters, out.counters, tries);
  out.has_kernels = SeqlockRead(page.kernels, out.kernels, tries);
  out.has_apis = SeqlockRead(page.apis, out.apis, tries);
  out.ring = std::make_unique<Ring>();
  out.has_ring = SeqlockRead(page.ring, *out.ring, tries);
  out.has_stats = SeqlockRead(page.stats, out.stats, tries);
  const bool complete = out.has_identity && out.has_counters && out.has_kernels && out.has_apis &&
                        out.has_ring && out.has_stats;
  if (!complete) {
    out.state = PageState::kBusy;
  } else if (out.counters.updated_monotonic_ns + kStalledAfterNs < MonotonicNowNs() &&
             out.identity.start_monotonic_ns + kStalledAfterNs < MonotonicNowNs()) {
    out.state = PageState::kStalled;
  }
  return true;
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
  const std::vector<std::string> dirs = options.dirs.empty() ? ReaderLiveDirs() : options.dirs;
  for (const std::string& dir : dirs) {
    DIR* listing = opendir(dir.c_str());
    if (listing == nullptr) continue;
    std::vector<std::pair<uint32_t, std::string>> pages;
    while (dirent* entry = readdir(listing)) {
      const uint32_t pid = PidOfPageName(entry->d_name);
      if (pid != 0 && (options.only_pid == 0 || pid == options.only_pid)) {
        pages.emplace_back(pid, dir + "/" + entry->d_name);
      }
    }
    closedir(listing);
    for (const auto& [pid, path] : pages) {
      ProcessSnapshot snapshot;
      if (ReadPage(path, pid, options, result, snapshot)) {
        result.processes.push_back(std::move(snapshot));
      }
    }
  }
  std::sort(result.processes.begin(), result.processes.end(),
            [](const ProcessSnapshot& a, const ProcessSnapshot& b) { return a.pid < b.pid; });
  return result;
}

}  // namespace gpuperf::live
