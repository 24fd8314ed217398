#include "base/process_owner.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace gpuperf {
namespace {

// The numbers after "Key:" on the line that starts with it; empty when there is none.
std::vector<unsigned long> NumbersOf(const std::string& status, const char* key) {
  std::vector<unsigned long> numbers;
  const std::string prefix = std::string("\n") + key;
  const size_t at = ("\n" + status).find(prefix);
  if (at == std::string::npos) return numbers;
  const char* cursor = status.c_str() + at + std::strlen(key);
  for (;;) {
    while (*cursor == ' ' || *cursor == '\t') ++cursor;
    if (*cursor < '0' || *cursor > '9') break;
    char* end = nullptr;
    numbers.push_back(std::strtoul(cursor, &end, 10));
    cursor = end;
  }
  return numbers;
}

}  // namespace

bool ProcessOwner::RunsAs(uid_t uid) const {
  for (uid_t id : uids) {
    if (id == uid) return true;
  }
  return false;
}

bool ProcessOwner::OnlyUser(uid_t uid) const {
  for (uid_t id : uids) {
    if (id != uid) return false;
  }
  return true;
}

std::optional<ProcessOwner> ReadProcessOwner(uint32_t pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%u/status", pid);
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  // The ids come in the first few hundred bytes; the file is a few KiB at most.
  std::string status;
  char buffer[4096];
  ssize_t n;
  while (status.size() < 65536 && (n = read(fd, buffer, sizeof(buffer))) > 0) {
    status.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  const std::vector<unsigned long> uids = NumbersOf(status, "Uid:");
  const std::vector<unsigned long> gids = NumbersOf(status, "Gid:");
  if (uids.size() != 4 || gids.size() != 4) return std::nullopt;
  ProcessOwner owner;
  for (int i = 0; i < 4; ++i) {
    owner.uids[i] = static_cast<uid_t>(uids[i]);
    owner.gids[i] = static_cast<gid_t>(gids[i]);
  }
  for (unsigned long group : NumbersOf(status, "Groups:")) {
    owner.groups.push_back(static_cast<gid_t>(group));
  }
  return owner;
}

}  // namespace gpuperf
