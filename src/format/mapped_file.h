// A read-only mapping of a whole trace file, and what the reader must know of the file
// before it reads it: whether a process still writes it, and which file it is (device
// and inode: a link names a file already read).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>

#include "gpuperf/status.h"

namespace gpuperf::format {

class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // Opens `path` without blocking (a FIFO is refused, not waited on) and maps it; only a
  // regular file is a trace.
  Status Open(const std::string& path);
  // Maps the regular file open as `fd` (the caller keeps it); `path` names it in messages.
  Status Map(int fd, const std::string& path);

  std::span<const uint8_t> bytes() const {
    return size_ == 0 ? std::span<const uint8_t>()
                      : std::span<const uint8_t>(static_cast<const uint8_t*>(data_), size_);
  }
  // Another open file description holds the writer's lock (gpuperf/trace_lock.h): the
  // mapping is of a file still growing, up to where it was when mapped.
  bool being_written() const { return being_written_; }
  // The reader is done with the bytes before `offset`: their pages leave the process's
  // resident memory (they stay in the page cache, and a later access maps them again,
  // reading the same bytes). A trace read once front to back thus holds a few megabytes
  // of it at a time instead of all of it. Pages go in steps of a few megabytes.
  void ReleaseBefore(size_t offset);
  dev_t device() const { return device_; }
  ino_t inode() const { return inode_; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  size_t released_ = 0;  // bytes before this were released
  bool being_written_ = false;
  dev_t device_ = 0;
  ino_t inode_ = 0;
};

}  // namespace gpuperf::format
