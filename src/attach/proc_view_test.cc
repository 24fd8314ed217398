#include "attach/proc_view.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpuperf::attach {
namespace {

TEST(ProcViewTest, MappingsWithAndWithoutPaths) {
  const auto maps = ParseMappings(
      "7f0000000000-7f0000021000 r-xp 00002000 08:01 1234   /usr/lib/x86_64-linux-gnu/libc.so.6\n"
      "7f0000021000-7f0000022000 rw-p 00000000 00:00 0 \n"
      "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
      "not a mapping line\n");
  ASSERT_EQ(maps.size(), 3u);
  EXPECT_EQ(maps[0].start, 0x7f0000000000u);
  EXPECT_EQ(maps[0].end, 0x7f0000021000u);
  EXPECT_EQ(maps[0].offset, 0x2000u);
  EXPECT_TRUE(maps[0].readable && maps[0].executable && maps[0].is_private && !maps[0].writable);
  EXPECT_EQ(maps[0].path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  EXPECT_EQ(maps[1].path, "");
  EXPECT_EQ(maps[2].path, "[stack]");
  EXPECT_EQ(MappingAt(maps, 0x7f0000020fffu), &maps[0]);
  EXPECT_EQ(MappingAt(maps, 0x7f0000021000u), &maps[1]);
  EXPECT_EQ(MappingAt(maps, 0x10u), nullptr);
  EXPECT_EQ(BaseName(maps[0].path), "libc.so.6");
}

TEST(ProcViewTest, TaskStatusFields) {
  const TaskStatus status = ParseTaskStatus(
      "Name:\tpython3\nState:\tS (sleeping)\nTracerPid:\t812\n"
      "Uid:\t1000\t1000\t1000\t1000\nGid:\t100\t100\t100\t100\n"
      "SigBlk:\t0000000000010002\nCapEff:\t0000000000080000\n");
  EXPECT_EQ(status.name, "python3");
  EXPECT_EQ(status.state, 'S');
  EXPECT_EQ(status.tracer, 812);
  EXPECT_EQ(status.uid[0], 1000u);
  EXPECT_EQ(status.gid[3], 100u);
  EXPECT_EQ(status.blocked_signals, 0x10002u);
  EXPECT_EQ(status.effective_caps, uint64_t{1} << 19);  // CAP_SYS_PTRACE
}

TEST(ProcViewTest, SyscallStates) {
  auto running = ParseSyscallState("running\n");
  ASSERT_TRUE(running);
  EXPECT_TRUE(running->running);
  auto waiting = ParseSyscallState("202 0x7f10 0x80 0x0 0x0 0x0 0x0 0x7ffd1000 0x7f00abcd\n");
  ASSERT_TRUE(waiting);
  EXPECT_TRUE(waiting->in_syscall);
  EXPECT_EQ(waiting->nr, 202);
  EXPECT_EQ(waiting->args[1], 0x80u);
  EXPECT_EQ(waiting->sp, 0x7ffd1000u);
  EXPECT_EQ(waiting->pc, 0x7f00abcdu);
  auto outside = ParseSyscallState("-1 0x7ffd2000 0x401000\n");
  ASSERT_TRUE(outside);
  EXPECT_FALSE(outside->in_syscall);
  EXPECT_EQ(outside->pc, 0x401000u);
  EXPECT_FALSE(ParseSyscallState("202 0x1\n"));
}

TEST(ProcViewTest, ThisProcessRunsAndItsMainThreadComesFirst) {
  EXPECT_TRUE(ProcessRunning(getpid()));
  EXPECT_FALSE(ProcessRunning(999999999));
  const auto threads = ListThreads(getpid());
  ASSERT_FALSE(threads.empty());
  EXPECT_EQ(threads.front(), getpid());
}

TEST(ProcViewTest, NamedPipesReadAsPipes) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_EQ(DescriptorTarget(getpid(), static_cast<uint64_t>(fds[0])).rfind("pipe:", 0), 0u);
  close(fds[0]);
  close(fds[1]);
  char path[] = "/tmp/gpuperf-fifo-XXXXXX";
  ASSERT_NE(mkdtemp(path), nullptr);
  const std::string fifo = std::string(path) + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const int fd = open(fifo.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(DescriptorTarget(getpid(), static_cast<uint64_t>(fd)), "pipe:" + fifo);
  close(fd);
  unlink(fifo.c_str());
  rmdir(path);
}

}  // namespace
}  // namespace gpuperf::attach
