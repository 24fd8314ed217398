#include "cli/output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

namespace gpuperf::cli {
namespace {

constexpr size_t kBufferBytes = 1 << 18;

// The temporary file that Ctrl+C or a kill must not leave behind. A command writes one
// output file at a time, so one slot is enough.
char g_temp_path[PATH_MAX];
volatile sig_atomic_t g_temp_pending = 0;
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous_actions[3];

void RemoveTempAndDie(int sig) {
  if (g_temp_pending) ::unlink(g_temp_path);
  struct sigaction fallback;
  std::memset(&fallback, 0, sizeof(fallback));
  fallback.sa_handler = SIG_DFL;
  ::sigaction(sig, &fallback, nullptr);
  ::raise(sig);
}

void GuardTempFile(const std::string& path) {
  if (path.size() >= sizeof(g_temp_path)) return;
  std::memcpy(g_temp_path, path.c_str(), path.size() + 1);
  g_temp_pending = 1;
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = RemoveTempAndDie;
  for (size_t i = 0; i < std::size(kCleanupSignals); ++i) {
    ::sigaction(kCleanupSignals[i], &action, &g_previous_actions[i]);
  }
}

void ReleaseTempFile() {
  if (!g_temp_pending) return;
  for (size_t i = 0; i < std::size(kCleanupSignals); ++i) {
    ::sigaction(kCleanupSignals[i], &g_previous_actions[i], nullptr);
  }
  g_temp_pending = 0;
}

Status CannotWrite(const std::string& path, int error, const std::string& why = "") {
  return Error(StatusCode::kIoError,
               "cannot write " + path + ": " + (why.empty() ? std::strerror(error) : why));
}

std::string FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "directory";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISSOCK(mode)) return "socket";
  return "special file";
}

// A hidden name next to the target, unlikely to collide; O_EXCL makes sure it is new.
std::string TemporaryName(const std::filesystem::path& target, std::mt19937_64& random) {
  std::string base = target.filename().string().substr(0, 200);
  char suffix[16];
  std::snprintf(suffix, sizeof(suffix), "%06llx",
                static_cast<unsigned long long>(random() & 0xffffff));
  std::filesystem::path dir = target.parent_path();
  return (dir.empty() ? std::string() : dir.string() + "/") + "." + base + ".gpuperf-" + suffix;
}

}  // namespace

FdStreamBuf::FdStreamBuf(int fd) : fd_(fd), buffer_(kBufferBytes) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

bool FdStreamBuf::WriteAll(const char* data, size_t size) {
  while (size > 0 && error_ == 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      break;
    }
    data += n;
    size -= static_cast<size_t>(n);
    bytes_written_ += static_cast<uint64_t>(n);
  }
  return error_ == 0;
}

bool FdStreamBuf::Drain() {
  const size_t pending = static_cast<size_t>(pptr() - pbase());
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return WriteAll(buffer_.data(), pending);
}

FdStreamBuf::int_type FdStreamBuf::overflow(int_type ch) {
  if (!Drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(ch, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
  }
  return traits_type::not_eof(ch);
}

std::streamsize FdStreamBuf::xsputn(const char* data, std::streamsize size) {
  if (error_ != 0) return 0;
  const auto bytes = static_cast<size_t>(size);
  if (bytes > static_cast<size_t>(epptr() - pptr())) {
    if (!Drain()) return 0;
    // Large blocks go straight to the file instead of through the buffer.
    if (bytes >= buffer_.size()) return WriteAll(data, bytes) ? size : 0;
  }
  std::memcpy(pptr(), data, bytes);
  pbump(static_cast<int>(bytes));
  return size;
}

int FdStreamBuf::sync() {
  return Drain() ? 0 : -1;
}

OutputFile::OutputFile(int fd, bool owns_fd, std::string name, std::string temp_path,
                       std::string target)
    : fd_(fd),
      owns_fd_(owns_fd),
      name_(std::move(name)),
      temp_path_(std::move(temp_path)),
      target_(std::move(target)),
      buffer_(fd),
      stream_(&buffer_) {}

OutputFile::~OutputFile() {
  if (!owns_fd_) buffer_.Drain();  // standard output keeps what was written
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  if (!temp_path_.empty()) {
    ::unlink(temp_path_.c_str());
    ReleaseTempFile();
  }
}

Result<std::unique_ptr<OutputFile>> OutputFile::Open(const std::string& path,
                                                     const std::string& input) {
  if (path.empty() || path == "-") {
    return std::unique_ptr<OutputFile>(new OutputFile(STDOUT_FILENO, false, "stdout", "", ""));
  }
  struct stat st;
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) return CannotWrite(path, errno);
  struct stat input_st;
  if (exists && S_ISREG(st.st_mode) && !input.empty() && ::stat(input.c_str(), &input_st) == 0 &&
      st.st_dev == input_st.st_dev && st.st_ino == input_st.st_ino) {
    return Error(StatusCode::kInvalidArgument,
                 path + " is the input trace: not writing over it (choose another -o)");
  }

  if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    // Written in place. Non-blocking open: a FIFO without a reader fails (ENXIO)
    // instead of hanging; the writes themselves block as usual.
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
      return CannotWrite(path, errno,
                         errno == ENXIO ? "it is a FIFO that no process is reading" : "");
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return std::unique_ptr<OutputFile>(new OutputFile(fd, true, path, "", ""));
  }
  if (exists && !S_ISREG(st.st_mode)) {
    return Error(StatusCode::kInvalidArgument,
                 path + " is a " + FileKind(st.st_mode) + ": not writing over it");
  }

  std::string target = path;
  if (exists) {
    // A read-only file stays as it is, even where its directory would allow the rename.
    if (::access(path.c_str(), W_OK) != 0) return CannotWrite(path, errno);
    // Through a symbolic link, replace the file it points at, not the link.
    std::error_code ec;
    std::string resolved = std::filesystem::canonical(path, ec).string();
    if (!ec) target = resolved;
  }
  std::mt19937_64 random(std::random_device{}());
  for (int attempt = 0; attempt < 32; ++attempt) {
    std::string temp = TemporaryName(target, random);
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return CannotWrite(path, errno);
    if (exists) ::fchmod(fd, st.st_mode & 07777);  // the replacement keeps the old mode
    GuardTempFile(temp);
    return std::unique_ptr<OutputFile>(new OutputFile(fd, true, path, temp, target));
  }
  return CannotWrite(path, EEXIST, "no free temporary name next to it");
}

Status OutputFile::WriteError(int error) const {
  return Error(StatusCode::kIoError, "writing " + name_ + ": " + std::strerror(error));
}

Status OutputFile::Finish(Status result) {
  buffer_.Drain();
  int error = buffer_.error();
  if (owns_fd_ && fd_ >= 0) {
    if (::close(fd_) != 0 && error == 0) error = errno;
    fd_ = -1;
  }
  if (error != 0) return WriteError(error);
  if (!result.ok()) return result;
  if (!temp_path_.empty()) {
    if (::rename(temp_path_.c_str(), target_.c_str()) != 0) {
      return CannotWrite(name_, errno);  // the destructor removes the temporary file
    }
    temp_path_.clear();
    ReleaseTempFile();
  }
  return Status::Ok();
}

Status FlushStdout() {
  int error = 0;
  if (std::fflush(stdout) != 0) error = errno;
  // A write that failed before (a full buffer flushed early) left no errno behind.
  if (std::ferror(stdout) && error == 0) error = EIO;
  if (error == 0) return Status::Ok();
  return Error(StatusCode::kIoError, std::string("writing stdout: ") + std::strerror(error));
}

}  // namespace gpuperf::cli
