#include "inject/flight/flight_ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "gpuperf/trace.h"
#include "support/temp_dir.h"

namespace gpuperf::inject {
namespace {

constexpr uint64_t kSec = 1'000'000'000ull;
constexpr uint64_t kMs = 1'000'000ull;
constexpr uint32_t kPid = 77;

// A program that launches one kernel every `gap` from t = 1 s on; each launch has an API
// call and a launch link at `t`, and its kernel runs 2 ms later.
class FlightRingTest : public ::testing::Test {
 protected:
  FlightRing MakeRing(uint64_t window_ns, uint64_t cap_bytes) {
    FlightRingOptions options;
    options.window_ns = window_ns;
    options.memory_cap_bytes = cap_bytes;
    options.grace_ns = 500 * kMs;
    options.segment_ns = 100 * kMs;
    return FlightRing(options, [this] { return now_; });
  }

  // Definitions as the writer thread sends them first: names, a stack, a Python code
  // object, the process, a thread, a device.
  void Define(FlightRing& ring) {
    ring.AddString(1, "_Z6kernelv");
    ring.AddString(2, "cudaLaunchKernel");
    ring.AddString(3, "train.py");
    ring.AddStack(StackRecord{kPid, 1, {0x401000, 0x402000}});
    PythonCodeRecord code;
    code.pid = kPid;
    code.code_id = 1;
    code.file = 3;
    ring.AddPythonCode(code);
    ring.Add(ProcessRecord{kPid, 1, 0, 0, 0, 500 * kMs, 0});
    ring.Add(ThreadRecord{kPid, 9, 0});
    DeviceRecord device;
    device.pid = kPid;
    ring.Add(device);
  }

  // Launches until `until`, flushing the ring every 50 ms as the writer would.
  void LaunchUntil(FlightRing& ring, uint64_t until, uint64_t gap) {
    for (; now_ < until; now_ += gap) {
      const uint32_t id = ++correlation_;
      ring.Add(ApiRecord{kPid, 9, ApiDomain::kRuntime, 211, 2, now_, now_ + 5000, id, 0});
      ring.Add(LaunchLinkRecord{kPid, 9, id, 1, 2, now_});
      KernelRecord kernel;
      kernel.pid = kPid;
      kernel.name = 1;
      kernel.correlation_id = id;
      kernel.start_ns = now_ + 2 * kMs;
      // Durations and grids vary as real ones do (a constant record compresses to nothing).
      random_ = random_ * 6364136223846793005ull + 1442695040888963407ull;
      kernel.end_ns = kernel.start_ns + 1000 + (random_ >> 44);
      kernel.grid_x = static_cast<uint32_t>(random_ >> 52);
      ring.Add(kernel);
      launched_.push_back(kernel);
      if (now_ % (50 * kMs) < gap) {
        ASSERT_TRUE(ring.Flush().ok());
      }
    }
  }

  Trace DumpAndLoad(FlightRing& ring, std::vector<StatRecord> overrides = {}) {
    const std::string path = dir_.File("dump.gpt");
    auto dumped = ring.Dump(path, now_, overrides);
    EXPECT_TRUE(dumped.ok()) << dumped.status().message();
    auto trace = LoadTrace(path);
    EXPECT_TRUE(trace.ok()) << trace.status().message();
    EXPECT_EQ(trace->read_report.chunks_corrupt, 0u);
    return trace.ok() ? std::move(trace).value() : Trace{};
  }

  uint64_t now_ = 1 * kSec;
  uint32_t correlation_ = 0;
  uint64_t random_ = 1;
  std::vector<KernelRecord> launched_;
  testing::TempDir dir_;
};

TEST_F(FlightRingTest, DumpHoldsExactlyTheWindowWithEveryDefinition) {
  FlightRing ring = MakeRing(3 * kSec, 64 << 20);
  Define(ring);
  LaunchUntil(ring, 10 * kSec, kMs);
  const uint64_t cutoff = now_ - 3 * kSec;
  Trace trace = DumpAndLoad(ring);

  std::set<uint32_t> want, got;
  for (const KernelRecord& k : launched_) {
    if (k.end_ns >= cutoff) want.insert(k.correlation_id);
  }
  for (const KernelRecord& k : trace.kernels) got.insert(k.correlation_id);
  EXPECT_EQ(got, want);
  EXPECT_EQ(trace.kernels.size(), want.size());  // no kernel twice
  // Every kept kernel keeps its launch link and API call, also those made just before the
  // window (2 ms before their kernel ran), and no other call is kept.
  std::set<uint32_t> linked, called;
  for (const LaunchLinkRecord& link : trace.launch_links) linked.insert(link.correlation_id);
  for (const ApiRecord& api : trace.apis) called.insert(api.correlation_id);
  EXPECT_EQ(linked, want);
  EXPECT_EQ(called, want);
  EXPECT_LT(*want.begin(), 1 + (cutoff - kSec) / kMs);  // one launched just before the window

  // Definitions from long before the window are all there.
  ASSERT_GE(trace.strings.size(), 4u);
  EXPECT_EQ(trace.strings[1], "_Z6kernelv");
  ASSERT_GE(trace.stacks.size(), 2u);
  EXPECT_EQ(trace.stacks[1].pcs.size(), 2u);
  EXPECT_EQ(trace.python_codes.size(), 1u);
  EXPECT_EQ(trace.threads.size(), 1u);
  EXPECT_EQ(trace.devices.size(), 1u);
  ASSERT_EQ(trace.processes.size(), 1u);
  EXPECT_EQ(trace.processes[0].start_ns, cutoff);  // the trace covers the window
  EXPECT_EQ(trace.processes[0].end_ns, now_);
}

TEST_F(FlightRingTest, ShortRunDumpsEverythingAndKeepsTheProcessStart) {
  FlightRing ring = MakeRing(60 * kSec, 64 << 20);
  Define(ring);
  LaunchUntil(ring, 2 * kSec, 10 * kMs);
  Trace trace = DumpAndLoad(ring);
  EXPECT_EQ(trace.kernels.size(), launched_.size());
  EXPECT_EQ(trace.launch_links.size(), launched_.size());
  EXPECT_EQ(trace.processes[0].start_ns, 500 * kMs);
}

TEST_F(FlightRingTest, OldSegmentsAgeOutWithoutCountingAsLoss) {
  FlightRing ring = MakeRing(1 * kSec, 64 << 20);
  Define(ring);
  LaunchUntil(ring, 20 * kSec, kMs);
  // 1 s of window + 0.5 s of grace in 100 ms segments, plus the one being filled.
  EXPECT_LE(ring.sealed_segments(), 17u);
  EXPECT_EQ(ring.EvictedSince(now_ - kSec), 0u);
  Trace trace = DumpAndLoad(ring);
  EXPECT_NEAR(static_cast<double>(trace.kernels.size()), 1000.0, 5.0);
}

TEST_F(FlightRingTest, MemoryCapDropsTheOldestAndCountsWhatTheWindowLost) {
  constexpr uint64_t kCap = 256 << 10;
  FlightRing ring = MakeRing(60 * kSec, kCap);
  Define(ring);
  LaunchUntil(ring, 21 * kSec, 100'000);            // 200,000 launches: far more than 256 KiB holds
  EXPECT_LE(ring.peak_bytes(), kCap + (64 << 10));  // the open segment's last records
  const uint64_t evicted = ring.EvictedSince(0);    // the whole run is inside the window
  EXPECT_GT(evicted, 0u);
  Trace trace = DumpAndLoad(ring, {StatRecord{kPid, 47, evicted}});
  // Three records per launch: what the dump lacks is exactly what was counted.
  const uint64_t kept = trace.kernels.size() + trace.launch_links.size() + trace.apis.size();
  EXPECT_EQ(kept + evicted, 3 * launched_.size());
  // The newest launches are the ones kept.
  ASSERT_FALSE(trace.kernels.empty());
  uint32_t newest = 0;
  for (const KernelRecord& k : trace.kernels) newest = std::max(newest, k.correlation_id);
  EXPECT_EQ(newest, correlation_);
  bool stat_written = false;
  for (const StatRecord& s : trace.stats) stat_written |= s.stat == 47 && s.value == evicted;
  EXPECT_TRUE(stat_written);
}

TEST_F(FlightRingTest, CallsBeforeTheWindowFollowTheirKernel) {
  FlightRing ring = MakeRing(1 * kSec, 64 << 20);
  Define(ring);
  // Two calls at t = 1 s, each with PyTorch's op id; only the first one's kernel runs late
  // enough (it waited in a queue) to be inside the window of a dump at 2.4 s.
  ring.Add(ExternalCorrelationRecord{kPid, 1, 4242, 1000});
  ring.Add(ExternalCorrelationRecord{kPid, 1, 4343, 999});
  ring.Add(LaunchLinkRecord{kPid, 9, 1000, 1, 2, now_});
  ring.Add(LaunchLinkRecord{kPid, 9, 999, 1, 2, now_});
  KernelRecord early;
  early.pid = kPid;
  early.correlation_id = 999;
  early.start_ns = now_ + kMs;
  early.end_ns = now_ + 2 * kMs;
  ring.Add(early);
  ASSERT_TRUE(ring.Flush().ok());
  now_ += 150 * kMs;
  ASSERT_TRUE(ring.Flush().ok());  // sealed: wholly before the window
  now_ += 1250 * kMs;
  KernelRecord late = early;
  late.correlation_id = 1000;
  late.start_ns = now_ - 100 * kMs;
  late.end_ns = now_ - 50 * kMs;
  ring.Add(late);
  Trace trace = DumpAndLoad(ring);
  ASSERT_EQ(trace.kernels.size(), 1u);
  EXPECT_EQ(trace.kernels[0].correlation_id, 1000u);
  ASSERT_EQ(trace.launch_links.size(), 1u);
  EXPECT_EQ(trace.launch_links[0].correlation_id, 1000u);
  ASSERT_EQ(trace.external_correlations.size(), 1u);
  EXPECT_EQ(trace.external_correlations[0].external_id, 4242u);
}

}  // namespace
}  // namespace gpuperf::inject
