// The writer's lock on a trace file (gpuperf/trace_lock.h). Compiled into the injection
// library with the writer: nothing here reads a trace.
#include "gpuperf/trace_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace gpuperf {
namespace {

// The whole file, however long it grows (l_len 0). l_pid must be 0 for OFD locks.
struct flock WholeFile(short type) {
  struct flock lock;
  std::memset(&lock, 0, sizeof(lock));
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  return lock;
}

bool AllDigits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

Status SetLock(int fd, const std::string& path, short type) {
  struct flock lock = WholeFile(type);
  while (::fcntl(fd, F_OFD_SETLK, &lock) != 0) {
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EACCES) return StillBeingRecorded(path, PidInTraceName(path));
    if (errno == ENOLCK || errno == EINVAL || errno == EOPNOTSUPP) return Status::Ok();
    return Error(StatusCode::kIoError, "cannot lock " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace

Status StillBeingRecorded(const std::string& path, uint32_t pid) {
  return Error(StatusCode::kBusy,
               path + " is still being recorded by " +
                   (pid != 0 ? "pid " + std::to_string(pid) : std::string("another process")));
}

Status LockTraceFile(int fd, const std::string& path) {
  return SetLock(fd, path, F_WRLCK);
}

Status HoldTraceFile(int fd, const std::string& path) {
  return SetLock(fd, path, F_RDLCK);
}

bool TraceFileLocked(int fd) {
  struct flock probe = WholeFile(F_WRLCK);
  if (::fcntl(fd, F_OFD_GETLK, &probe) != 0) return false;
  return probe.l_type != F_UNLCK;
}

uint32_t PidInTraceName(const std::string& path) {
  std::string_view name = path;
  if (const size_t slash = name.rfind('/'); slash != std::string_view::npos) {
    name.remove_prefix(slash + 1);
  }
  if (!name.ends_with(".gpt")) return 0;
  name.remove_suffix(4);
  // <program>.<pid>.flight-N: the flight recorder's dumps.
  if (const size_t flight = name.rfind(".flight-");
      flight != std::string_view::npos && AllDigits(name.substr(flight + 8))) {
    name = name.substr(0, flight);
  }
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return 0;
  std::string_view pid = name.substr(dot + 1);
  // <program>.<pid>-N: a later image of a program that exec'd itself.
  if (const size_t dash = pid.find('-'); dash != std::string_view::npos) {
    if (!AllDigits(pid.substr(dash + 1))) return 0;
    pid = pid.substr(0, dash);
  }
  if (!AllDigits(pid) || pid.size() > 10) return 0;
  const unsigned long long value = std::stoull(std::string(pid));
  return value <= UINT32_MAX ? static_cast<uint32_t>(value) : 0;
}

}  // namespace gpuperf
