#include "live/live_reader.h"

#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <vector>

#include "base/process_owner.h"
#include "format/live_accumulator.h"
#include "format/live_dir.h"
#include "format/live_page_file.h"
#include "format/live_text.h"
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

// Whether process `pid` runs as `uid` (its effective user).
bool ReadProcessOwnerUid(pid_t pid, uid_t uid) {
  const auto owner = ReadProcessOwner(static_cast<uint32_t>(pid));
  return owner && owner->uids[1] == uid;
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

// Children that wait until killed: live processes of this user to name pages after.
class Sleepers {
 public:
  explicit Sleepers(int count) {
    for (int i = 0; i < count; ++i) {
      const pid_t child = fork();
      if (child == 0) {
        for (;;) pause();
      }
      pids_.push_back(static_cast<uint32_t>(child));
    }
  }
  ~Sleepers() {
    for (uint32_t pid : pids_) {
      kill(static_cast<pid_t>(pid), SIGKILL);
      waitpid(static_cast<pid_t>(pid), nullptr, 0);
    }
  }
  uint32_t operator[](size_t i) const { return pids_[i]; }

 private:
  std::vector<uint32_t> pids_;
};

// A complete page of `pid` written in `dir` (by the writer's own code), and left there.
std::string LeavePage(const std::string& dir, uint32_t pid) {
  auto page = MakePage(dir, IdentityOf(pid));
  const std::string path = page->path();
  const std::string copy = path + ".copy";
  std::filesystem::copy_file(path, copy);
  page.reset();  // removes the page
  std::filesystem::rename(copy, path);
  return path;
}

bool HasLine(const ScanResult& scan, const std::string& line) {
  return std::find(scan.skipped.begin(), scan.skipped.end(), line) != scan.skipped.end();
}

// Whatever else is in a directory named like a page is skipped with one line saying what it
// is, and never opened in a way that could block (a FIFO) or follow a link; the real page
// beside them is read.
TEST(LiveReaderTest, FilesThatAreNotPagesAreSkippedWithALineEach) {
  TempDir dir;
  Sleepers others(5);
  auto real = MakePage(dir.path(), IdentityOf(getpid()));
  const std::string base = dir.path().string() + "/";
  const std::string fifo = base + std::to_string(others[0]) + ".live";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  TempDir elsewhere;
  const std::string target = LeavePage(elsewhere.path(), others[1]);
  const std::string link = base + std::to_string(others[1]) + ".live";
  std::filesystem::create_symlink(target, link);
  const std::string big = LeavePage(dir.path(), others[2]);
  ASSERT_EQ(truncate(big.c_str(), 1ll << 30), 0);
  const std::string grown = LeavePage(dir.path(), others[3]);
  ASSERT_EQ(truncate(grown.c_str(), sizeof(Page) + 4096), 0);
  const std::string junk = base + std::to_string(others[4]) + ".live";
  gpuperf::testing::WriteStringToFile(junk, std::string(sizeof(Page), 'x'));

  const ScanResult scan = Scan(dir.path());
  ASSERT_EQ(scan.processes.size(), 1u);
  EXPECT_EQ(scan.processes[0].pid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(scan.skipped.size(), 5u);
  EXPECT_TRUE(HasLine(scan, fifo + ": a FIFO, not a live page"));
  EXPECT_TRUE(HasLine(scan, link + ": a symbolic link, not a live page"));
  EXPECT_TRUE(HasLine(scan, big + ": 1073741824 bytes, more than a live page can be"));
  EXPECT_TRUE(HasLine(scan, grown + ": " + std::to_string(sizeof(Page) + 4096) +
                                " bytes, not the page's own size (" + std::to_string(sizeof(Page)) +
                                ")"));
  EXPECT_TRUE(HasLine(scan, junk + ": not a live page (no page magic)"));
  // None of them was removed (they are not pages of ended processes).
  for (const std::string& path : {fifo, link, big, grown, junk}) {
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::symlink_status(path))) << path;
  }
}

// A page directory that is a link, or that others can write, is not read.
TEST(LiveReaderTest, ADirectoryOthersCanWriteOrALinkIsNotRead) {
  TempDir dir;
  auto page = MakePage(dir.path(), IdentityOf(getpid()));
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  ScanResult scan = Scan(dir.path());
  EXPECT_TRUE(scan.processes.empty());
  EXPECT_TRUE(HasLine(scan, dir.path().string() + " is writable by other users: not read"));
  ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
  EXPECT_EQ(Scan(dir.path()).processes.size(), 1u);
}

// What root needs to make (files of other users): skipped unless running as root.
class LiveReaderAsRootTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (files of other users)";
  }
};

// In a user's directory, a page of another user, and a page of the user that names a
// process of another user (root's, this test's), are skipped; the user's own page of the
// user's own process is read.
TEST_F(LiveReaderAsRootTest, PagesOfOtherUsersOrNamingTheirProcessesAreSkipped) {
  constexpr uid_t kUser = 54321, kOther = 54322;
  TempDir scratch;
  const std::string dir = scratch.File("gpuperf-user");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  const pid_t child = fork();
  if (child == 0) {
    if (setresuid(kUser, kUser, kUser) != 0) _exit(1);
    for (;;) pause();
  }
  // Wait until the child runs as the user (a bounded poll of /proc).
  for (int i = 0; i < 2000 && !ReadProcessOwnerUid(child, kUser); ++i) usleep(5000);
  ASSERT_TRUE(ReadProcessOwnerUid(child, kUser));
  const std::string own = LeavePage(dir, static_cast<uint32_t>(child));
  const std::string forged = LeavePage(dir, static_cast<uint32_t>(getpid()));
  Sleepers others(1);
  const std::string foreign = LeavePage(dir, others[0]);
  for (const std::string& path : {dir, own, forged}) ASSERT_EQ(chown(path.c_str(), kUser, 0), 0);
  ASSERT_EQ(chown(foreign.c_str(), kOther, 0), 0);

  const ScanResult scan = Scan(dir);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_EQ(scan.processes.size(), 1u);
  EXPECT_EQ(scan.processes[0].pid, static_cast<uint32_t>(child));
  EXPECT_EQ(scan.skipped.size(), 2u);
  EXPECT_TRUE(HasLine(scan, forged + ": names pid " + std::to_string(getpid()) +
                                ", a process of uid 0, not of uid " + std::to_string(kUser)));
  EXPECT_TRUE(HasLine(scan, foreign + ": belongs to uid " + std::to_string(kOther) +
                                ", not to uid " + std::to_string(kUser) +
                                " whose directory it is in"));
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
