#include "attach/thread_frames.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

namespace gpuperf::attach {
namespace {

#if defined(__x86_64__)

extern "C" __attribute__((noinline)) void gp_frames_test_sleeper() {
  for (;;) pause();
}

extern "C" __attribute__((noinline)) void gp_frames_test_caller() {
  gp_frames_test_sleeper();
  asm volatile("");  // no tail call: the caller stays on the stack
}

// A child waiting in pause() under two known functions, stopped with ptrace: its frames are
// unwound from the modules' call frame information, out to its first frame.
TEST(ThreadFramesTest, AStoppedThreadsCallersAreItsRealOnes) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    gp_frames_test_caller();
    _exit(0);
  }
  ASSERT_EQ(ptrace(PTRACE_SEIZE, child, nullptr, nullptr), 0);
  // Until the child sits in pause(), not somewhere on its way there.
  user_regs_struct regs{};
  for (int tries = 0; tries < 10000; ++tries) {
    ASSERT_EQ(ptrace(PTRACE_INTERRUPT, child, nullptr, nullptr), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, __WALL), child);
    ASSERT_EQ(ptrace(PTRACE_GETREGS, child, nullptr, &regs), 0);
    if (static_cast<int64_t>(regs.orig_rax) == SYS_pause) break;
    ptrace(PTRACE_CONT, child, nullptr, nullptr);
    usleep(1000);
  }
  ASSERT_EQ(static_cast<int64_t>(regs.orig_rax), SYS_pause);
  FrameWalker walker(child);
  const ThreadFrames frames = walker.Walk(child, regs);
  kill(child, SIGKILL);
  waitpid(child, nullptr, __WALL);
  EXPECT_TRUE(frames.complete);
  auto inside = [&frames](void (*function)()) {
    const uint64_t begin = reinterpret_cast<uint64_t>(function);
    for (uint64_t pc : frames.pcs) {
      if (pc > begin && pc <= begin + 64) return true;
    }
    return false;
  };
  EXPECT_TRUE(inside(gp_frames_test_sleeper));
  EXPECT_TRUE(inside(gp_frames_test_caller));
  EXPECT_GE(frames.pcs.size(), 4u);  // pause, sleeper, caller, this test, ..., _start
}

#endif

}  // namespace
}  // namespace gpuperf::attach
