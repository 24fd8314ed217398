#include "live/live_reader.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "live/live_accumulator.h"
#include "live/live_dir.h"
#include "live/live_page_file.h"
#include "live/live_text.h"
#include "support/temp_dir.h"

namespace gpuperf::live {
namespace {

using gpuperf::testing::TempDir;

Identity IdentityOf(uint32_t pid) {
  Identity id;
  id.pid = pid;
  id.start_ticks = ProcessStartTicks(pid);
  id.start_monotonic_ns = MonotonicNowNs();
  id.rank = 3;
  CopyText(id.command, "train.py --steps 10");
  return id;
}

// A page of `pid` with one kernel published.
std::unique_ptr<LivePageFile> MakePage(const std::string& dir, const Identity& identity) {
  auto file = LivePageFile::Create(dir, identity);
  EXPECT_TRUE(file.ok()) << file.status().message();
  if (!file.ok()) return nullptr;
  LiveAccumulator accumulator([](StringId) { return std::string("_Z4stepv"); });
  KernelRecord kernel;
  kernel.name = 1;
  kernel.start_ns = MonotonicNowNs() - 5000;
  kernel.end_ns = kernel.start_ns + 1234;
  accumulator.AddKernel(kernel);
  accumulator.Publish((*file)->page(), MonotonicNowNs(), true);
  return std::move(file).value();
}

ScanResult Scan(const std::string& dir) {
  ScanOptions options;
  options.dirs = {dir};
  return ScanLivePages(options);
}

TEST(LiveReaderTest, ReadsTheCountersOfARunningProcess) {
  TempDir dir;
  auto page = MakePage(dir.path(), IdentityOf(getpid()));
  ASSERT_NE(page, nullptr);
  const ScanResult scan = Scan(dir.path());
  ASSERT_EQ(scan.processes.size(), 1u);
  const ProcessSnapshot& p = scan.processes[0];
  EXPECT_EQ(p.pid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(p.state, PageState::kOk);
  EXPECT_EQ(TextOf(p.identity.command), "train.py --steps 10");
  EXPECT_EQ(p.identity.rank, 3);
  EXPECT_EQ(p.counters.devices[0].kernel_ns, 1234u);
  ASSERT_EQ(p.kernels.count, 1u);
  EXPECT_EQ(TextOf(p.kernels.entries[0].name), "step()");
  EXPECT_EQ(std::filesystem::status(page->path()).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  page->Remove();
  EXPECT_TRUE(Scan(dir.path()).processes.empty());
}

TEST(LiveReaderTest, AWriterStuckInsideABlockMakesThePageBusyNotTheReaderWait) {
  TempDir dir;
  auto page = MakePage(dir.path(), IdentityOf(getpid()));
  ASSERT_NE(page, nullptr);
  page->page().kernels.lock.sequence.fetch_add(1);  // inside a write, forever
  const auto start = std::chrono::steady_clock::now();
  const ScanResult scan = Scan(dir.path());
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_LT(waited, std::chrono::seconds(1));
  ASSERT_EQ(scan.processes.size(), 1u);
  EXPECT_EQ(scan.processes[0].state, PageState::kBusy);
  EXPECT_FALSE(scan.processes[0].has_kernels);
  EXPECT_TRUE(scan.processes[0].has_counters);  // the other blocks still read
}

TEST(LiveReaderTest, PagesOfEndedProcessesAreSkippedAndRemoved) {
  TempDir dir;
  // A child that dies inside a write, as a SIGKILL would leave it; reaped, then a zombie.
  for (bool reap : {true, false}) {
    const pid_t child = fork();
    if (child == 0) {
      auto page = MakePage(dir.path(), IdentityOf(getpid()));
      page->page().counters.lock.sequence.fetch_add(1);
      _exit(0);  // no destructors: the page stays
    }
    if (reap) waitpid(child, nullptr, 0);
    // A zombie: exited, not reaped yet.
    for (int i = 0; !reap && i < 200 && CheckLiveness(child, 0) == Liveness::kAlive; ++i) {
      usleep(5000);
    }
    const std::string path = PagePath(dir.path(), child);
    ASSERT_TRUE(std::filesystem::exists(path));
    const ScanResult scan = Scan(dir.path());
    EXPECT_TRUE(scan.processes.empty());
    EXPECT_EQ(scan.stale, 1u);
    EXPECT_EQ(scan.removed, 1u);
    EXPECT_FALSE(std::filesystem::exists(path));
    if (!reap) waitpid(child, nullptr, 0);
  }
}

TEST(LiveReaderTest, APageLeftUnderAPidNowUsedByAnotherProcessIsStale) {
  TempDir dir;
  Identity identity = IdentityOf(getpid());
  identity.start_ticks += 1;  // the writer started at another time than this process
  auto page = MakePage(dir.path(), identity);
  const ScanResult scan = Scan(dir.path());
  EXPECT_TRUE(scan.processes.empty());
  EXPECT_EQ(scan.stale, 1u);
}

TEST(LiveReaderTest, OtherLayoutsAndOtherFilesAreNotRead) {
  TempDir dir;
  auto page = MakePage(dir.path(), IdentityOf(getpid()));
  page->page().version = kLayoutVersion + 1;
  gpuperf::testing::WriteStringToFile(dir.File("notes.live"), "x");
  gpuperf::testing::WriteStringToFile(dir.File("1.txt"), "x");
  // Not yet announced (no magic): a page being created.
  gpuperf::testing::WriteStringToFile(dir.File(std::to_string(getppid()) + ".live"),
                                      std::string(100, '\0'));
  const ScanResult scan = Scan(dir.path());
  EXPECT_TRUE(scan.processes.empty());
  ASSERT_EQ(scan.skipped.size(), 1u);
  EXPECT_NE(scan.skipped[0].find("layout version 2 (this gpuperf reads 1)"), std::string::npos);
}

TEST(LiveDirTest, PageNamesAndStartTimes) {
  EXPECT_EQ(PidOfPageName("1234.live"), 1234u);
  EXPECT_EQ(PidOfPageName("12a4.live"), 0u);
  EXPECT_EQ(PidOfPageName(".live"), 0u);
  EXPECT_EQ(PidOfPageName("1234.live.tmp"), 0u);
  EXPECT_EQ(PidOfPageName("99999999999.live"), 0u);
  EXPECT_GT(ProcessStartTicks(getpid()), 0u);
  EXPECT_EQ(CheckLiveness(getpid(), ProcessStartTicks(getpid())), Liveness::kAlive);
  // A command name with spaces and parentheses does not shift the fields.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_NAME, "a) b (c");
    char one = 1;
    if (write(ready[1], &one, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char one;
  ASSERT_EQ(read(ready[0], &one, 1), 1);
  const uint64_t ticks = ProcessStartTicks(child);
  EXPECT_GE(ticks, ProcessStartTicks(getpid()));
  EXPECT_EQ(CheckLiveness(child, ticks), Liveness::kAlive);
  EXPECT_EQ(CheckLiveness(child, ticks + 1), Liveness::kReused);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(CheckLiveness(child, ticks), Liveness::kGone);
  close(ready[0]);
  close(ready[1]);
}

TEST(LiveDirTest, RefusesADirectoryOthersCanWrite) {
  TempDir dir;
  const std::string shared = dir.File("shared");
  ASSERT_EQ(mkdir(shared.c_str(), 0777), 0);
  chmod(shared.c_str(), 0777);
  const Status status = PrepareLiveDir(shared);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("writable by other users"), std::string::npos);
  EXPECT_TRUE(PrepareLiveDir(dir.File("fresh")).ok());
  EXPECT_EQ(std::filesystem::status(dir.File("fresh")).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_all);
}

}  // namespace
}  // namespace gpuperf::live
