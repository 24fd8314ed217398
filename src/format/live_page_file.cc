#include "format/live_page_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "base/file_size_limit.h"
#include "format/live_dir.h"
#include "format/live_seqlock.h"

namespace gpuperf::live {

Result<std::unique_ptr<LivePageFile>> LivePageFile::Create(const std::string& dir,
                                                           const Identity& identity) {
  // Sizing the file past the limit would raise SIGXFSZ on the program's thread (cuInit).
  const uint64_t limit = FileSizeLimit();
  if (limit < sizeof(Page)) {
    return Error(StatusCode::kIoError, "the file size limit (ulimit -f) of " +
                                           std::to_string(limit / 1024) + " KiB is below its " +
                                           std::to_string((sizeof(Page) + 1023) / 1024) + " KiB");
  }
  GP_RETURN_IF_ERROR(PrepareLiveDir(dir));
  const std::string path = PagePath(dir, identity.pid);
  // A page of an earlier image of this pid (exec) is replaced by a new file, never
  // truncated: a reader may have the old one mapped, and a mapping past the end of a
  // shrunk file faults.
  unlink(path.c_str());
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    return Error(StatusCode::kIoError, "cannot create " + path + ": " + std::strerror(errno));
  }
  void* memory = MAP_FAILED;
  int error = 0;
  {
    FileSizeSignalGuard no_signal;  // the limit may have been lowered since it was read
    if (fchmod(fd, 0600) == 0 && ftruncate(fd, sizeof(Page)) == 0) {
      memory = mmap(nullptr, sizeof(Page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    error = errno;
  }
  close(fd);
  if (memory == MAP_FAILED) {
    unlink(path.c_str());
    return Error(StatusCode::kIoError, "cannot map " + path + ": " + std::strerror(error));
  }
  // The file is zeros: construct the page in place (seqlocks even, no magic yet).
  Page* page = new (memory) Page();
  page->version = kLayoutVersion;
  page->page_bytes = sizeof(Page);
  SeqlockWrite(page->identity, identity);
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(page->magic, kPageMagic, sizeof(kPageMagic));
  return std::unique_ptr<LivePageFile>(new LivePageFile(path, page));
}

LivePageFile::~LivePageFile() {
  Remove();
  munmap(page_, sizeof(Page));
}

void LivePageFile::Remove() {
  if (!removed_) unlink(path_.c_str());
  removed_ = true;
}

}  // namespace gpuperf::live
