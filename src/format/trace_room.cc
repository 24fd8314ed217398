#include "format/trace_room.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "base/file_size_limit.h"

namespace gpuperf::format {
namespace {

std::string LimitText(uint64_t bytes) {
  if (bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

Status TraceRoom::Make(int fd, uint64_t end, uint64_t bytes, bool is_end) {
  const uint64_t wanted = bytes + (is_end ? 0 : kTraceEndReserve);
  const uint64_t limit = FileSizeLimit();
  if (end + wanted > limit) {
    return Error(StatusCode::kIoError,
                 "the file size limit (ulimit -f) of " + LimitText(limit) + " is reached");
  }
  if (!can_preallocate_) return Status::Ok();
  int result;
  do {
    result =
        ::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(end), static_cast<off_t>(wanted));
  } while (result != 0 && errno == EINTR);
  if (result == 0) {
    taken_to_ = std::max(taken_to_, end + wanted);
    return Status::Ok();
  }
  if (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL || errno == ENODEV) {
    // Some file systems (older NFS, FUSE) cannot: a failed write is cut off instead, and the
    // end has no reserve there.
    can_preallocate_ = false;
    return Status::Ok();
  }
  // The end is written into what the reserve holds, whatever the disk says now.
  if (is_end) return Status::Ok();
  return Error(StatusCode::kIoError, std::strerror(errno));
}

void TraceRoom::Release(int fd, uint64_t end) {
  if (!can_preallocate_ || taken_to_ <= end) return;
  // Past the end of the file: tmpfs frees it when punched, ext4 and XFS when truncated.
  ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(end),
              static_cast<off_t>(taken_to_ - end));
  int ignored = ::ftruncate(fd, static_cast<off_t>(end));
  (void)ignored;
}

}  // namespace gpuperf::format
