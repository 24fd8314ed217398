// Analyses run together read a trace once: each gets the calls and the report a read of
// its own would give, from fewer passes over the file.
#include "format/shared_read.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "format/file_format.h"
#include "support/read_log.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

using testing::CallLog;
using testing::DescribeReadReport;
using testing::TempDir;
using testing::WriteManyChunks;

// What one task saw: a look at a few chunk types, then the whole trace.
struct Seen {
  std::string processes_only;
  std::string everything;
  std::string report;
};

Status LookThenReadAll(const std::string& path, Seen& seen) {
  const uint16_t processes[] = {format::kProcessChunk};
  CallLog small;
  GP_RETURN_IF_ERROR(ReadTraceChunks(path, processes, small, nullptr));
  CallLog all;
  ReadReport report;
  GP_RETURN_IF_ERROR(ReadTrace(path, all, &report));
  seen = {small.text(), all.text(), DescribeReadReport(report)};
  return Status::Ok();
}

TEST(SharedRead, TasksSeeWhatTheirOwnReadsGiveFromOnePassEach) {
  TempDir dir;
  const std::string path = dir.File("t.gpt");
  WriteManyChunks(path, 42, 200);
  Seen alone;
  ASSERT_TRUE(LookThenReadAll(path, alone).ok());
  ASSERT_NE(alone.everything.find("kernel batch of"), std::string::npos);

  std::vector<Seen> seen(3);
  std::vector<std::function<Status()>> tasks;
  for (Seen& s : seen) tasks.push_back([&path, &s] { return LookThenReadAll(path, s); });
  SharedReadStats stats;
  const std::vector<Status> results = RunSharingReads(tasks, &stats);
  for (size_t i = 0; i < seen.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << results[i].message();
    EXPECT_EQ(seen[i].processes_only, alone.processes_only) << "task " << i;
    EXPECT_EQ(seen[i].everything, alone.everything) << "task " << i;
    EXPECT_EQ(seen[i].report, alone.report) << "task " << i;
  }
  EXPECT_EQ(stats.reads, 6u);
  EXPECT_EQ(stats.passes, 2u);  // the three looks together, then the three whole reads
}

// A task that reads first everything, one that reads nothing, one that reads another trace:
// each still gets its own, and nobody waits for a task that has ended.
TEST(SharedRead, TasksOfDifferentReadsAndNoReadsAllEnd) {
  TempDir dir;
  const std::string a = dir.File("a.gpt");
  const std::string b = dir.File("b.gpt");
  WriteManyChunks(a, 1, 50);
  WriteManyChunks(b, 2, 80);
  CallLog a_alone, b_alone;
  ASSERT_TRUE(ReadTrace(a, a_alone, nullptr).ok());
  ASSERT_TRUE(ReadTrace(b, b_alone, nullptr).ok());

  CallLog a_shared, b_shared;
  std::vector<std::function<Status()>> tasks = {
      [&] { return ReadTrace(a, a_shared, nullptr); },
      [] { return Error(StatusCode::kInvalidArgument, "gave up before reading"); },
      [&] { return ReadTrace(b, b_shared, nullptr); },
  };
  SharedReadStats stats;
  const std::vector<Status> results = RunSharingReads(tasks, &stats);
  EXPECT_TRUE(results[0].ok());
  EXPECT_EQ(results[1].code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(results[2].ok());
  EXPECT_EQ(a_shared.text(), a_alone.text());
  EXPECT_EQ(b_shared.text(), b_alone.text());
  EXPECT_EQ(stats.passes, 2u);  // two traces: a pass each
}

// A report that already holds something is added to, as a read of its own would: it gets
// a pass of its own.
TEST(SharedRead, AReportThatHoldsSomethingIsAddedTo) {
  TempDir dir;
  const std::string path = dir.File("t.gpt");
  WriteManyChunks(path, 42, 30);
  ReadReport once;
  CallLog ignored;
  ASSERT_TRUE(ReadTrace(path, ignored, &once).ok());
  ReadReport twice_alone = once;
  ASSERT_TRUE(ReadTrace(path, ignored, &twice_alone).ok());

  ReadReport twice_shared = once;
  ReadReport fresh;
  CallLog first, second;
  SharedReadStats stats;
  RunSharingReads({[&] { return ReadTrace(path, first, &twice_shared); },
                   [&] { return ReadTrace(path, second, &fresh); }},
                  &stats);
  EXPECT_EQ(DescribeReadReport(twice_shared), DescribeReadReport(twice_alone));
  EXPECT_EQ(DescribeReadReport(fresh), DescribeReadReport(once));
  EXPECT_EQ(stats.passes, 2u);
}

}  // namespace
}  // namespace gpuperf
