#include "format/live_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace gpuperf::live {
namespace {

constexpr size_t kMaxBaseEntries = 1u << 20;

bool IsDirectory(const char* path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

std::string BaseForUser(uid_t uid) {
  const char* base = IsDirectory("/dev/shm") ? "/dev/shm" : "/tmp";
  return std::string(base) + "/gpuperf-" + std::to_string(uid);
}

// A directory of `uid` that no one else can write, reached without a symlink.
bool IsOwnedPrivateDir(const std::string& dir, uid_t uid, std::string* why) {
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) {
    if (why) *why = dir + ": " + std::strerror(errno);
    return false;
  }
  const std::string problem = WhyNotPrivateDir(st, uid);
  if (why && !problem.empty()) *why = dir + problem;
  return problem.empty();
}

}  // namespace

std::string WhyNotPrivateDir(const struct stat& st, std::optional<uid_t> uid) {
  if (S_ISLNK(st.st_mode)) return " is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return " is not a directory";
  if (uid && st.st_uid != *uid) {
    return " belongs to uid " + std::to_string(st.st_uid) + ", not " + std::to_string(*uid);
  }
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return " is writable by other users";
  return "";
}

std::string DefaultLiveDir() {
  if (const char* dir = std::getenv("GPUPERF_LIVE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return BaseForUser(geteuid());
}

Status PrepareLiveDir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Error(StatusCode::kIoError, "cannot create " + dir + ": " + std::strerror(errno));
  }
  std::string why;
  if (!IsOwnedPrivateDir(dir, geteuid(), &why)) return Error(StatusCode::kIoError, why);
  return Status::Ok();
}

std::vector<LiveDirToRead> ReaderLiveDirs() {
  std::vector<LiveDirToRead> dirs;
  if (std::getenv("GPUPERF_LIVE_DIR") != nullptr && *std::getenv("GPUPERF_LIVE_DIR") != '\0') {
    dirs.push_back({DefaultLiveDir(), std::nullopt});
    return dirs;
  }
  dirs.push_back({DefaultLiveDir(), geteuid()});
  if (geteuid() != 0) return dirs;
  for (const char* base : {"/dev/shm", "/tmp"}) {
    DIR* listing = opendir(base);
    if (listing == nullptr) continue;
    // Bounded: anyone can fill /tmp with names.
    size_t entries = 0;
    while (dirent* entry = readdir(listing)) {
      if (++entries > kMaxBaseEntries) break;
      const char* name = entry->d_name;
      if (std::strncmp(name, "gpuperf-", 8) != 0 || name[8] < '0' || name[8] > '9') continue;
      char* end = nullptr;
      errno = 0;
      const unsigned long uid = std::strtoul(name + 8, &end, 10);
      const std::string path = std::string(base) + "/" + name;
      if (*end != '\0' || errno != 0 || uid > UINT32_MAX || path == dirs[0].path) continue;
      // Whose it is and whether it is a private directory at all is the reader's to check,
      // on the directory it opens (this listing is only a list of names).
      dirs.push_back({path, static_cast<uid_t>(uid)});
    }
    closedir(listing);
  }
  return dirs;
}

std::string PagePath(const std::string& dir, uint32_t pid) {
  return dir + "/" + std::to_string(pid) + ".live";
}

uint32_t PidOfPageName(const std::string& name) {
  constexpr std::string_view kSuffix = ".live";
  if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) return 0;
  uint64_t pid = 0;
  for (size_t i = 0; i + kSuffix.size() < name.size(); ++i) {
    const char c = name[i];
    if (c < '0' || c > '9' || pid > UINT32_MAX / 10) return 0;
    pid = pid * 10 + static_cast<uint64_t>(c - '0');
  }
  return pid <= UINT32_MAX ? static_cast<uint32_t>(pid) : 0;
}

uint64_t ProcessStartTicks(uint32_t pid, bool* zombie) {
  if (zombie) *zombie = false;
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%u/stat", pid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[1024];
  const ssize_t n = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  // The command name (field 2) may hold spaces and parentheses: fields restart after the
  // last ')'. Then: state (3), ... starttime (22).
  const char* fields = std::strrchr(text, ')');
  if (fields == nullptr) return 0;
  ++fields;
  int field = 2;
  const char* cursor = fields;
  char state = '?';
  while (*cursor != '\0' && field < 22) {
    while (*cursor == ' ') ++cursor;
    ++field;
    if (field == 3) state = *cursor;
    if (field == 22) break;
    while (*cursor != '\0' && *cursor != ' ') ++cursor;
  }
  if (field != 22) return 0;
  if (zombie) *zombie = state == 'Z' || state == 'X';
  return std::strtoull(cursor, nullptr, 10);
}

Liveness CheckLiveness(uint32_t pid, uint64_t start_ticks) {
  bool zombie = false;
  const uint64_t now_ticks = ProcessStartTicks(pid, &zombie);
  if (now_ticks == 0 || zombie) return Liveness::kGone;
  if (start_ticks != 0 && now_ticks != start_ticks) return Liveness::kReused;
  return Liveness::kAlive;
}

}  // namespace gpuperf::live
