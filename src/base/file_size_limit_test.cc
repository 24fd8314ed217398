#include "base/file_size_limit.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

#include "support/temp_dir.h"

namespace gpuperf {
namespace {

bool XfszPendingHere() {
  sigset_t pending;
  sigpending(&pending);
  return sigismember(&pending, SIGXFSZ) == 1;
}

TEST(FileSizeLimit, AWritePastTheLimitFailsWithoutEndingTheProcess) {
  testing::TempDir dir;
  const int fd = open(dir.File("f").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  rlimit lowered = old;
  lowered.rlim_cur = 100;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lowered), 0);
  EXPECT_EQ(FileSizeLimit(), 100u);
  ssize_t first = 0, second = 0;
  int error = 0;
  {
    FileSizeSignalGuard guard;
    const char bytes[150] = {};
    first = write(fd, bytes, sizeof(bytes));  // up to the limit
    second = write(fd, bytes, sizeof(bytes));
    error = errno;
  }
  setrlimit(RLIMIT_FSIZE, &old);
  close(fd);
  // Still running: the default action of SIGXFSZ would have ended the test.
  EXPECT_EQ(first, 100);
  EXPECT_EQ(second, -1);
  EXPECT_EQ(error, EFBIG);
  EXPECT_FALSE(XfszPendingHere());
  EXPECT_EQ(FileSizeLimit(), old.rlim_cur == RLIM_INFINITY ? UINT64_MAX : old.rlim_cur);
}

}  // namespace
}  // namespace gpuperf
