// Where a command writes its result: standard output, or a file that changes only when
// the command succeeds. Every command that writes goes through here, so the rules hold
// for all of them:
//
// - Never destroy what the user has. A regular file, or a name that does not exist yet,
//   is written as a temporary file in the same directory (created with O_EXCL, mode
//   0666 minus the umask, or the mode of the file it replaces) and renamed over the
//   target by Finish(). A failure, or a signal that ends the command, removes only the
//   temporary file; the target stays as it was.
// - A character device or a FIFO (/dev/null, /dev/stdout, a pipe from `-o >(gzip)`) is
//   written in place and never removed or replaced. A FIFO that nobody reads is refused
//   instead of waited on. A directory, a block device or a socket is refused.
// - Write failures are errors: the first one is kept and Finish() reports it as
//   "writing <name>: <strerror>".
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "gpuperf/status.h"

namespace gpuperf::cli {

// A write buffer over a file descriptor that remembers why a write failed.
class FdStreamBuf : public std::streambuf {
 public:
  explicit FdStreamBuf(int fd);
  int error() const { return error_; }  // errno of the first failed write, or 0
  uint64_t bytes_written() const { return bytes_written_; }
  bool Drain();  // writes what is buffered; false once any write failed

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* data, std::streamsize size) override;
  int sync() override;

 private:
  bool WriteAll(const char* data, size_t size);

  int fd_;
  int error_ = 0;
  uint64_t bytes_written_ = 0;
  std::vector<char> buffer_;
};

class OutputFile {
 public:
  // `path` empty or "-" means standard output. `input`, when given, is the file the
  // command reads: writing over it is refused.
  static Result<std::unique_ptr<OutputFile>> Open(const std::string& path,
                                                  const std::string& input = "");
  // Without a successful Finish(): removes the temporary file (only it).
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return stream_; }
  const std::string& name() const { return name_; }  // the path as given, or "stdout"
  bool is_stdout() const { return fd_ == 1 && !owns_fd_; }
  uint64_t bytes_written() const { return buffer_.bytes_written(); }

  // Ends the output of a command whose work returned `result`. On success: flushes,
  // closes, and replaces a regular target now. On failure: nothing is replaced (the
  // destructor removes the temporary file). A failed write is the error returned, since
  // it is what made the work fail. Called once.
  Status Finish(Status result = Status::Ok());

 private:
  OutputFile(int fd, bool owns_fd, std::string name, std::string temp_path, std::string target);
  Status WriteError(int error) const;

  int fd_;
  bool owns_fd_;
  std::string name_;
  std::string temp_path_;  // empty unless writing a temporary file
  std::string target_;     // what the temporary file replaces
  FdStreamBuf buffer_;
  std::ostream stream_;
};

// Flushes C's stdout (one-line summaries printed with printf) and reports a failed
// write as "writing stdout: <strerror>".
Status FlushStdout();

}  // namespace gpuperf::cli
