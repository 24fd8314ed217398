#include "attach/safe_point.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>

namespace gpuperf::attach {
namespace {

constexpr uint64_t kNoArgs[6] = {};

TEST(SafePointTest, WaitsThatRestartMayBeBorrowed) {
  const uint64_t futex_wait[6] = {0x1000, 0x80 /* FUTEX_WAIT | FUTEX_PRIVATE_FLAG */};
  const uint64_t futex_bitset[6] = {0x1000, 0x89 /* FUTEX_WAIT_BITSET | PRIVATE */};
  EXPECT_EQ(UnborrowableSyscall(SYS_futex, futex_wait, ""), "");
  EXPECT_EQ(UnborrowableSyscall(SYS_futex, futex_bitset, ""), "");
  EXPECT_EQ(UnborrowableSyscall(SYS_clock_nanosleep, kNoArgs, ""), "");
  EXPECT_EQ(UnborrowableSyscall(SYS_poll, kNoArgs, ""), "");
  EXPECT_EQ(UnborrowableSyscall(SYS_wait4, kNoArgs, ""), "");
  EXPECT_EQ(UnborrowableSyscall(SYS_read, kNoArgs, "pipe:[4711]"), "");
  EXPECT_EQ(UnborrowableSyscall(SYS_read, kNoArgs, "pipe:/tmp/go.fifo"), "");
  EXPECT_EQ(UnborrowableSyscall(SYS_read, kNoArgs, "/dev/pts/3"), "");
}

TEST(SafePointTest, WaitsAStopWouldShowAreNot) {
  const uint64_t futex_wake[6] = {0x1000, 0x81 /* FUTEX_WAKE | PRIVATE */};
  EXPECT_NE(UnborrowableSyscall(SYS_futex, futex_wake, ""), "");
  // These return EINTR after a stop, or change the signal mask while they wait.
  EXPECT_NE(UnborrowableSyscall(SYS_epoll_wait, kNoArgs, ""), "");
  EXPECT_NE(UnborrowableSyscall(SYS_rt_sigtimedwait, kNoArgs, ""), "");
  EXPECT_NE(UnborrowableSyscall(SYS_accept4, kNoArgs, ""), "");
  EXPECT_NE(UnborrowableSyscall(SYS_ppoll, kNoArgs, ""), "");
  EXPECT_NE(UnborrowableSyscall(SYS_rt_sigsuspend, kNoArgs, ""), "");
  // What the loader and allocator wait in.
  EXPECT_NE(UnborrowableSyscall(SYS_mmap, kNoArgs, ""), "");
  EXPECT_NE(UnborrowableSyscall(SYS_read, kNoArgs, "/usr/lib/libfoo.so"), "");
  EXPECT_NE(UnborrowableSyscall(SYS_read, kNoArgs, "socket:[9]"), "");
}

TEST(SafePointTest, ACallerInsideDangerousCodeIsFound) {
  const std::vector<CodeRange> ranges = {{0x1000, 0x2000, "the dynamic loader"},
                                         {0x5000, 0x5100, "malloc"}};
  const uint64_t clean[] = {0x900, 0x3000, 0x5100 + 1};
  EXPECT_EQ(DangerOnStack(clean, ranges), "");
  const uint64_t in_malloc[] = {0x3000, 0x5040};
  EXPECT_EQ(DangerOnStack(in_malloc, ranges), "malloc");
  // A return address points just past its call: the very start of a range is no caller in it,
  // its end is (a call as the last instruction).
  const uint64_t at_start[] = {0x1000};
  EXPECT_EQ(DangerOnStack(at_start, ranges), "");
  const uint64_t at_end[] = {0x2000};
  EXPECT_EQ(DangerOnStack(at_end, ranges), "the dynamic loader");
}

TEST(SafePointTest, WholeLibrariesAndLibcsLockingFunctions) {
  std::vector<Mapping> mappings(4);
  mappings[0] = {0x10000, 0x20000, 0, true, false, true, true, "/lib64/ld-linux-x86-64.so.2"};
  mappings[1] = {0x30000, 0x40000, 0, true, false, true, true, "/usr/lib/libcuda.so.1"};
  mappings[2] = {0x50000, 0x60000, 0, true, false, false, true, "/usr/lib/libcupti.so.13"};  // data
  mappings[3] = {0x70000, 0x80000, 0, true, false, true, true, "/usr/lib/libm.so.6"};
  ElfImage libc;
  libc.dynamic_symbols["malloc"] = {0x100, 0x40};
  libc.dynamic_symbols["strlen"] = {0x200, 0x40};
  const auto ranges = DangerousCode(mappings, &libc, 0x90000);
  auto named = [&ranges](const std::string& what) {
    for (const CodeRange& r : ranges) {
      if (r.what == what) return r;
    }
    return CodeRange{};
  };
  EXPECT_EQ(named("the dynamic loader").begin, 0x10000u);
  EXPECT_EQ(named("libcuda.so.1").end, 0x40000u);
  EXPECT_EQ(named("libcupti.so.13").end, 0u);  // not code
  EXPECT_EQ(named("libm.so.6").end, 0u);
  EXPECT_EQ(named("malloc").begin, 0x90100u);
  EXPECT_EQ(named("strlen").end, 0u);
}

}  // namespace
}  // namespace gpuperf::attach
