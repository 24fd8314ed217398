#include "format/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "gpuperf/trace_lock.h"

namespace gpuperf::format {
namespace {

// What a path is when it is not a regular file, for the one-line refusal.
const char* NonRegularKind(mode_t mode) {
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISDIR(mode)) return "directory";
  return "special file";
}

}  // namespace

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  std::swap(data_, other.data_);
  std::swap(size_, other.size_);
  std::swap(released_, other.released_);
  std::swap(being_written_, other.being_written_);
  std::swap(device_, other.device_);
  std::swap(inode_, other.inode_);
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr && data_ != MAP_FAILED) ::munmap(data_, size_);
}

void MappedFile::ReleaseBefore(size_t offset) {
  constexpr size_t kStep = size_t{8} << 20;
  static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  if (data_ == nullptr || offset > size_) return;
  const size_t end = offset / page * page;
  if (end < released_ + kStep) return;
  // Only for this read-only private mapping: on memory of its own a process would lose
  // the contents.
  ::madvise(static_cast<char*>(data_) + released_, end - released_, MADV_DONTNEED);
  released_ = end;
}

Status MappedFile::Open(const std::string& path) {
  // Non-blocking, so that a FIFO without a writer is refused below instead of hanging
  // in open(); it changes nothing for the regular file that is mapped.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    return Error(errno == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError,
                 "cannot open " + path + ": " + std::strerror(errno));
  }
  Status status = Map(fd, path);
  ::close(fd);
  return status;
}

Status MappedFile::Map(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return Error(StatusCode::kIoError, "cannot stat " + path + ": " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return Error(StatusCode::kNotATrace,
                 path + " is a " + NonRegularKind(st.st_mode) + ", not a trace file");
  }
  device_ = st.st_dev;
  inode_ = st.st_ino;
  // Asked before the size is taken: a writer that ends in between leaves its file called
  // still being recorded (true a moment ago), never a snapshot of a growing file called
  // finished.
  being_written_ = TraceFileLocked(fd);
  if (::fstat(fd, &st) != 0) {
    return Error(StatusCode::kIoError, "cannot stat " + path + ": " + std::strerror(errno));
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data_ == MAP_FAILED) {
      data_ = nullptr;
      size_ = 0;
      return Error(StatusCode::kIoError, "cannot map " + path + ": " + std::strerror(errno));
    }
    ::madvise(data_, size_, MADV_SEQUENTIAL);
  }
  return Status::Ok();
}

}  // namespace gpuperf::format
