// The pprof model read from a file: a launch whose GPU work carries the id of a nested call
// with no API record of its own is charged the outermost call's time, which the model
// finds by reading the API records a second time.
#include "analyze/flame/launch_profile.h"

#include <gtest/gtest.h>

#include "gpuperf/trace_writer.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

constexpr uint32_t kPid = 40;
constexpr uint32_t kTid = 41;

void WriteNestedLaunches(TraceWriter& w) {
  const StringId launch = w.InternString("cudaLaunchKernel");
  const StringId kernel_name = w.InternString("k");
  w.AddStack(StackRecord{kPid, 1, {0x1000}});
  auto api = [&](uint32_t correlation, uint64_t start, uint64_t end) {
    ApiRecord a;
    a.pid = kPid;
    a.tid = kTid;
    a.name = launch;
    a.correlation_id = correlation;
    a.start_ns = start;
    a.end_ns = end;
    w.Add(a);
  };
  auto kernel = [&](uint32_t correlation, uint64_t start) {
    KernelRecord k;
    k.pid = kPid;
    k.name = kernel_name;
    k.correlation_id = correlation;
    k.start_ns = start;
    k.end_ns = start + 100;
    w.Add(k);
  };
  // Launch 1: the runtime call (id 11, 50..80 ns) and its driver call (id 12, no API
  // record); the kernel carries 12. Launch 2 (id 21, 200..207 ns): the kernel carries its
  // own id. A second record of call 11 (repeated) must not count.
  w.Add(LaunchLinkRecord{kPid, kTid, 11, 1, launch, 50});
  w.Add(LaunchLinkRecord{kPid, kTid, 12, 1, launch, 50});
  w.Add(LaunchLinkRecord{kPid, kTid, 21, 1, launch, 200});
  kernel(12, 1000);
  kernel(21, 2000);
  api(11, 50, 80);
  api(11, 50, 60);
  api(21, 200, 207);
}

uint64_t CpuLaunchNs(const LaunchProfile& profile) {
  uint64_t ns = 0;
  for (const LaunchCost& c : profile.costs) ns += c.cpu_launch_ns;
  return ns;
}

TEST(LaunchProfile, NestedIdIsChargedTheOutermostCallReadAgain) {
  testing::TempDir dir;
  const std::string path = dir.File("nested.gpt");
  {
    auto writer = TraceWriter::Create(path);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    WriteNestedLaunches(**writer);
    ASSERT_TRUE((*writer)->Close().ok());
  }
  Result<LaunchProfile> from_file = BuildLaunchProfile(path);
  ASSERT_TRUE(from_file.ok()) << from_file.status().message();
  EXPECT_EQ(CpuLaunchNs(*from_file), 30u + 7u);

  Result<Trace> trace = LoadTrace(path);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(CpuLaunchNs(BuildLaunchProfile(*trace)), 30u + 7u);
}

}  // namespace
}  // namespace gpuperf
