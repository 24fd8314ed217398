#include "analyze/report/report_model.h"

#include <gtest/gtest.h>

#include <sstream>

#include "analyze/diff/report_diff.h"
#include "export/report_export.h"
#include "export/report_json.h"
#include "gpuperf/stats.h"
#include "gpuperf/trace_writer.h"
#include "support/golden.h"
#include "support/temp_dir.h"

namespace gpuperf {
namespace {

// All times below are in microseconds after T0, the process start.
constexpr uint64_t T0 = 1'000'000;
constexpr uint64_t Us(uint64_t us) {
  return T0 + us * 1000;
}
constexpr uint32_t kPid = 100;
constexpr uint32_t kMain = 101;
constexpr uint32_t kHelper = 102;

// An API call of process kPid; times in ns.
ApiRecord ApiCallAt(uint32_t tid, ApiDomain domain, StringId name, uint64_t start_ns,
                    uint64_t end_ns, uint32_t correlation, int32_t rc = 0) {
  ApiRecord a;
  a.pid = kPid;
  a.tid = tid;
  a.domain = domain;
  a.name = name;
  a.start_ns = start_ns;
  a.end_ns = end_ns;
  a.correlation_id = correlation;
  a.return_code = rc;
  return a;
}

// A small run whose every number can be checked by hand:
//  - foo(float*) runs 3 times for 10, 20 and 30 µs; bar once for 40 µs (kernels 100 µs).
//  - one 1 MB HtoD copy in 50 µs (20 GB/s), one 1000-byte memset in 10 µs.
//  - the GPU idles from 170 to 5170 µs (5 ms) while the main thread waits 2 ms in
//    cudaStreamSynchronize.
//  - 1 MiB and 4 MiB allocated, the 1 MiB freed: peak 5 MiB, 4 MiB leaked.
//  - one cudaMalloc fails with cudaErrorMemoryAllocation, one cuModuleLoad with
//    CUDA_ERROR_INVALID_VALUE.
//  - NVTX "step" spans all four launches, "forward" the three foo launches.
void WriteHandTrace(TraceWriter& w) {
  const StringId foo = w.InternString("_Z3fooPf");
  const StringId bar = w.InternString("bar");
  const StringId launch = w.InternString("cudaLaunchKernel");
  const StringId malloc_name = w.InternString("cudaMalloc");
  const StringId free_name = w.InternString("cudaFree");
  const StringId memcpy_name = w.InternString("cudaMemcpy");
  const StringId memset_name = w.InternString("cudaMemsetAsync");
  const StringId sync_name = w.InternString("cudaStreamSynchronize");
  const StringId ctx_sync = w.InternString("cuCtxSynchronize");
  const StringId module_load = w.InternString("cuModuleLoad");

  ProcessRecord process;
  process.pid = kPid;
  process.command = w.InternString("./train --steps 1");
  process.hostname = w.InternString("testhost");
  process.start_ns = T0;
  process.end_ns = Us(20'000);
  w.Add(process);

  DeviceRecord device;
  device.pid = kPid;
  device.device_id = 0;
  device.name = w.InternString("NVIDIA H100 80GB HBM3");
  device.compute_major = 9;
  device.sm_count = 132;
  device.warp_size = 32;
  device.max_threads_per_block = 1024;
  device.max_warps_per_sm = 64;
  device.max_blocks_per_sm = 32;
  device.max_registers_per_block = 65536;
  device.max_registers_per_sm = 65536;
  device.max_shared_per_block = 48 * 1024;
  device.max_shared_per_sm = 228 * 1024;
  w.Add(device);

  auto api = [&](uint32_t tid, ApiDomain domain, StringId name, uint64_t start, uint64_t end,
                 uint32_t correlation, int32_t rc = 0) {
    w.Add(ApiCallAt(tid, domain, name, Us(start), Us(end), correlation, rc));
  };
  const ApiDomain rt = ApiDomain::kRuntime;
  api(kMain, rt, malloc_name, 10, 20, 1);
  api(kMain, rt, malloc_name, 20, 25, 2, /*cudaErrorMemoryAllocation*/ 2);
  api(kMain, rt, malloc_name, 25, 35, 3);
  api(kMain, rt, launch, 40, 45, 4);
  api(kMain, rt, launch, 45, 50, 5);
  api(kMain, rt, launch, 50, 55, 6);
  api(kMain, rt, memcpy_name, 110, 200, 7);
  api(kMain, rt, sync_name, 1170, 3170, 12);
  api(kMain, rt, launch, 5100, 5110, 8);
  api(kMain, rt, free_name, 5300, 5310, 9);
  api(kMain, rt, memset_name, 5310, 5320, 10);
  api(kHelper, ApiDomain::kDriver, ctx_sync, 5400, 5500, 11);
  api(kHelper, ApiDomain::kDriver, module_load, 5500, 5600, 13, /*INVALID_VALUE*/ 1);

  auto kernel = [&](StringId name, uint64_t start, uint64_t end, uint32_t correlation,
                    uint32_t block, uint32_t regs) {
    KernelRecord k;
    k.pid = kPid;
    k.name = name;
    k.device_id = 0;
    k.stream_id = 7;
    k.start_ns = Us(start);
    k.end_ns = Us(end);
    k.grid_x = 4;
    k.grid_y = k.grid_z = 1;
    k.block_x = block;
    k.block_y = k.block_z = 1;
    k.registers_per_thread = regs;
    k.correlation_id = correlation;
    w.Add(k);
  };
  kernel(foo, 50, 60, 4, 256, 32);
  kernel(foo, 60, 80, 5, 256, 32);
  kernel(foo, 80, 110, 6, 256, 32);
  kernel(bar, 5170, 5210, 8, 128, 128);

  MemcpyRecord copy;
  copy.pid = kPid;
  copy.kind = MemcpyKind::kHtoD;
  copy.bytes = 1'000'000;
  copy.device_id = 0;
  copy.stream_id = 7;
  copy.start_ns = Us(120);
  copy.end_ns = Us(170);
  copy.correlation_id = 7;
  w.Add(copy);

  MemsetRecord set;
  set.pid = kPid;
  set.bytes = 1000;
  set.memory_kind = MemoryKind::kDevice;
  set.device_id = 0;
  set.stream_id = 7;
  set.start_ns = Us(5320);
  set.end_ns = Us(5330);
  set.correlation_id = 10;
  w.Add(set);

  SyncRecord sync;
  sync.pid = kPid;
  sync.tid = kMain;
  sync.kind = SyncKind::kStreamSynchronize;
  sync.stream_id = 7;
  sync.start_ns = Us(1170);
  sync.end_ns = Us(3170);
  sync.correlation_id = 12;
  w.Add(sync);

  auto memory = [&](MemoryOp op, uint64_t address, uint64_t bytes, uint64_t at,
                    uint32_t correlation) {
    MemoryRecord m;
    m.pid = kPid;
    m.op = op;
    m.memory_kind = MemoryKind::kDevice;
    m.address = address;
    m.bytes = bytes;
    m.device_id = 0;
    m.timestamp_ns = Us(at);
    m.correlation_id = correlation;
    w.Add(m);
  };
  memory(MemoryOp::kAllocation, 0xA000, 1 << 20, 15, 1);
  memory(MemoryOp::kAllocation, 0xB000, 4 << 20, 30, 3);
  memory(MemoryOp::kRelease, 0xA000, 1 << 20, 5305, 9);

  // Stacks of the waiting and the leaking call, with symbols.
  const StringId module = w.InternString("/app/train");
  w.Add(ModuleRecord{kPid, module, w.InternString("abcd"), 0, 0x1000, 0x2000});
  auto symbol = [&](uint64_t pc, const char* function, const char* file, uint32_t line) {
    SymbolRecord s;
    s.pid = kPid;
    s.pc = pc;
    s.frames.push_back({w.InternString(function), w.InternString(file), line, module, pc - 0x1000});
    w.AddSymbol(s);
  };
  symbol(0x1010, "Trainer::sync", "src/train.cc", 42);
  symbol(0x1020, "main", "src/main.cc", 7);
  symbol(0x1030, "Model::alloc", "src/model.cc", 12);
  w.AddStack(StackRecord{kPid, 1, {0x1010, 0x1020}});
  w.AddStack(StackRecord{kPid, 2, {0x1030, 0x1020}});
  w.Add(LaunchLinkRecord{kPid, kMain, 12, 1, sync_name, Us(1170)});
  w.Add(LaunchLinkRecord{kPid, kMain, 3, 2, malloc_name, Us(25)});
  w.Add(LaunchLinkRecord{kPid, kMain, 4, 1, launch, Us(40)});  // launches: not kept

  auto nvtx = [&](uint32_t tid, const char* name, uint64_t start, uint64_t end) {
    NvtxRecord n;
    n.pid = kPid;
    n.tid = tid;
    n.kind = NvtxKind::kRange;
    n.name = w.InternString(name);
    n.start_ns = Us(start);
    n.end_ns = end ? Us(end) : 0;
    w.Add(n);
  };
  nvtx(kMain, "step", 40, 5250);
  nvtx(kMain, "forward", 40, 56);
  nvtx(kMain, "never_ended", 5000, 0);
  nvtx(kHelper, "helper", 5400, 5600);

  OverheadRecord overhead;
  overhead.pid = kPid;
  overhead.tid = kMain;
  overhead.kind = OverheadKind::kBufferFlush;
  overhead.start_ns = Us(100);
  overhead.end_ns = Us(110);
  w.Add(overhead);
  w.Add(overhead);

  auto stat = [&](StatId id, uint64_t value) {
    w.Add(StatRecord{kPid, static_cast<uint32_t>(id), value});
  };
  stat(StatId::callbacks, 10);
  stat(StatId::callback_ns, 5000);
  stat(StatId::cupti_dropped_records, 3);
  stat(StatId::cupti_dropped_records, 7);  // a later snapshot of the same counter
}

class ReportModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("hand.gpt");
    auto writer = TraceWriter::Create(path_);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    WriteHandTrace(**writer);
    ASSERT_TRUE((*writer)->Close().ok());
  }

  ReportModel Build(const ReportOptions& options = {}) {
    auto model = BuildReport(path_, options);
    EXPECT_TRUE(model.ok()) << model.status().message();
    return model.ok() ? std::move(model).value() : ReportModel{};
  }

  testing::TempDir dir_;
  std::string path_;
};

const KernelRow* FindKernel(const ReportModel& m, const std::string& name) {
  for (const KernelRow& k : m.kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

const ApiRow* FindApi(const std::vector<ApiRow>& rows, const std::string& name) {
  for (const ApiRow& a : rows) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

TEST_F(ReportModelTest, KernelStatistics) {
  ReportModel m = Build();
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.summary.kernels, 4u);
  EXPECT_EQ(m.summary.kernel_ns, 100'000u);
  const KernelRow& foo = m.kernels[0];  // sorted by total time
  EXPECT_EQ(foo.name, "_Z3fooPf");
  EXPECT_EQ(foo.display_name, "foo");
  EXPECT_EQ(foo.demangled, "foo(float*)");
  EXPECT_EQ(foo.time.count, 3u);
  EXPECT_EQ(foo.time.total_ns, 60'000u);
  EXPECT_EQ(foo.time.avg_ns(), 20'000u);
  EXPECT_EQ(foo.time.median_ns, 20'000u);
  EXPECT_EQ(foo.time.min_ns, 10'000u);
  EXPECT_EQ(foo.time.max_ns, 30'000u);
  EXPECT_DOUBLE_EQ(foo.gpu_time_fraction, 0.6);
  ASSERT_EQ(foo.configs.size(), 1u);
  EXPECT_EQ(foo.configs[0].calls, 3u);
  EXPECT_DOUBLE_EQ(foo.configs[0].occupancy.fraction, 1.0);
  // bar: 128 registers, 4 warps per block: 16 warps per SM fit, 16/64 = 25%.
  const KernelRow* bar = FindKernel(m, "bar");
  ASSERT_NE(bar, nullptr);
  EXPECT_DOUBLE_EQ(bar->configs[0].occupancy.fraction, 0.25);
  EXPECT_EQ(bar->configs[0].occupancy.limiter, OccupancyLimiter::kRegisters);
}

TEST_F(ReportModelTest, ApiCallsAndFailures) {
  ReportModel m = Build();
  EXPECT_EQ(m.summary.api_calls, 13u);
  EXPECT_EQ(m.summary.api_failures, 2u);
  const ApiRow* malloc_row = FindApi(m.runtime_api, "cudaMalloc");
  ASSERT_NE(malloc_row, nullptr);
  EXPECT_EQ(malloc_row->time.count, 3u);
  EXPECT_EQ(malloc_row->time.total_ns, 25'000u);
  EXPECT_EQ(malloc_row->time.min_ns, 5'000u);
  EXPECT_EQ(malloc_row->time.max_ns, 10'000u);
  EXPECT_EQ(malloc_row->failures, 1u);
  ASSERT_EQ(malloc_row->errors.size(), 1u);
  EXPECT_EQ(malloc_row->errors[0].name, "cudaErrorMemoryAllocation");
  const ApiRow* load = FindApi(m.driver_api, "cuModuleLoad");
  ASSERT_NE(load, nullptr);
  EXPECT_EQ(load->errors[0].name, "CUDA_ERROR_INVALID_VALUE");
  EXPECT_EQ(m.driver_api.size(), 2u);
}

// A gap after thousands of short calls on one thread, one long call among the first of
// them still running into it: the walk back from the gap's end passes many blocks of calls
// that all ended before the gap (reach is kept per block of 64 calls, not per call) and
// must still find the long call, and only the short calls that overlap the gap.
TEST(ReportIdleGapCpu, LongCallFarBackReachesIntoTheGap) {
  testing::TempDir dir;
  const std::string path = dir.File("gap.gpt");
  {
    auto writer = TraceWriter::Create(path);
    ASSERT_TRUE(writer.ok());
    TraceWriter& w = **writer;
    const StringId launch = w.InternString("cudaLaunchKernel");
    const StringId wait = w.InternString("cudaEventSynchronize");
    const StringId kernel_name = w.InternString("k");
    ProcessRecord process;
    process.pid = kPid;
    process.start_ns = T0;
    process.end_ns = Us(100'000);
    w.Add(process);
    uint32_t correlation = 0;
    auto api = [&](StringId name, uint64_t start_ns, uint64_t end_ns) {
      w.Add(ApiCallAt(kMain, ApiDomain::kRuntime, name, start_ns, end_ns, ++correlation));
    };
    auto kernel = [&](uint64_t start_ns, uint64_t end_ns) {
      KernelRecord k;
      k.pid = kPid;
      k.name = kernel_name;
      k.stream_id = 7;
      k.start_ns = start_ns;
      k.end_ns = end_ns;
      w.Add(k);
    };
    // Calls every µs from 0 to 5000 µs, 100 ns each; the 3rd one waits until 4500 µs.
    for (uint64_t i = 0; i < 5000; ++i) {
      api(i == 2 ? wait : launch, Us(i), i == 2 ? Us(4500) : Us(i) + 100);
    }
    kernel(Us(0), Us(3000));     // the GPU busy at the start...
    kernel(Us(4000), Us(5000));  // ...and from 4000 µs: idle 3000..4000 µs
    ASSERT_TRUE(w.Close().ok());
  }
  auto built = BuildReport(path, {});
  ASSERT_TRUE(built.ok()) << built.status().message();
  ASSERT_EQ(built->utilization.size(), 1u);
  const UtilizationRow& u = built->utilization[0];
  ASSERT_EQ(u.longest_gaps.size(), 1u);
  const IdleGap& gap = u.longest_gaps[0];
  EXPECT_EQ(gap.at_ns, 3'000'000u);
  EXPECT_EQ(gap.duration_ns, 1'000'000u);
  // The long call covers the gap; the 1,000 short calls in the gap count on their own (a
  // call counts as nested in another only within four calls of it).
  ASSERT_FALSE(gap.cpu.empty());
  EXPECT_EQ(gap.cpu[0].api, "cudaEventSynchronize");
  EXPECT_EQ(gap.cpu[0].overlap_ns, 1'000'000u);
  ASSERT_EQ(gap.cpu.size(), 2u);
  EXPECT_EQ(gap.cpu[1].api, "cudaLaunchKernel");
  EXPECT_EQ(gap.cpu[1].overlap_ns, 1000u * 100u);
}

TEST_F(ReportModelTest, CopiesAndMemsets) {
  ReportModel m = Build();
  ASSERT_EQ(m.memcpy.size(), 1u);
  EXPECT_EQ(m.memcpy[0].kind, MemcpyKind::kHtoD);
  EXPECT_EQ(m.memcpy[0].bytes, 1'000'000u);
  EXPECT_EQ(m.memcpy[0].time.total_ns, 50'000u);  // 1 MB / 50 µs = 20 GB/s
  ASSERT_EQ(m.memset.size(), 1u);
  EXPECT_EQ(m.memset[0].time.total_ns, 10'000u);
  EXPECT_EQ(m.summary.gpu_ns(), 160'000u);
}

TEST_F(ReportModelTest, SynchronizationWithStack) {
  ReportModel m = Build();
  ASSERT_EQ(m.sync.size(), 1u);
  EXPECT_EQ(m.sync[0].tid, kMain);
  EXPECT_EQ(m.sync[0].stream, 7u);
  EXPECT_EQ(m.sync[0].time.total_ns, 2'000'000u);
  ASSERT_EQ(m.sync[0].stack.size(), 2u);
  EXPECT_EQ(m.sync[0].stack[0], "Trainer::sync (train.cc:42)");
  EXPECT_EQ(m.sync[0].stack[1], "main (main.cc:7)");
}

TEST_F(ReportModelTest, MemoryPeakAndLeaks) {
  ReportModel m = Build();
  ASSERT_EQ(m.memory.size(), 1u);
  const MemoryDeviceRow& row = m.memory[0];
  EXPECT_EQ(row.allocations, 2u);
  EXPECT_EQ(row.frees, 1u);
  EXPECT_EQ(row.peak_bytes, 5u << 20);
  EXPECT_EQ(row.peak_at_ns, 30'000u);
  EXPECT_EQ(row.live_bytes_at_exit, 4u << 20);
  EXPECT_EQ(row.live_allocations_at_exit, 1u);
  ASSERT_EQ(m.leaks.size(), 1u);
  EXPECT_EQ(m.leaks[0].address, 0xB000u);
  EXPECT_EQ(m.leaks[0].api, "cudaMalloc");
  ASSERT_FALSE(m.leaks[0].stack.empty());
  EXPECT_EQ(m.leaks[0].stack[0], "Model::alloc (model.cc:12)");
}

TEST_F(ReportModelTest, UtilizationAndIdleGap) {
  ReportModel m = Build();
  ASSERT_EQ(m.utilization.size(), 1u);
  const UtilizationRow& u = m.utilization[0];
  EXPECT_EQ(u.busy_ns, 160'000u);
  EXPECT_EQ(u.span_ns, 5'590'000u);  // first API call (10 µs) to last (5600 µs)
  EXPECT_EQ(u.gaps, 1u);
  EXPECT_EQ(u.gap_ns, 5'000'000u);
  ASSERT_EQ(u.longest_gaps.size(), 1u);
  const IdleGap& gap = u.longest_gaps[0];
  EXPECT_EQ(gap.at_ns, 170'000u);
  ASSERT_EQ(gap.cpu.size(), 3u);
  EXPECT_EQ(gap.cpu[0].api, "cudaStreamSynchronize");
  EXPECT_EQ(gap.cpu[0].tid, kMain);
  EXPECT_EQ(gap.cpu[0].overlap_ns, 2'000'000u);
  EXPECT_EQ(gap.cpu[1].api, "cudaMemcpy");  // 170..200
  EXPECT_EQ(gap.cpu[1].overlap_ns, 30'000u);
  EXPECT_EQ(gap.cpu[2].api, "cudaLaunchKernel");
  EXPECT_EQ(gap.cpu[2].overlap_ns, 10'000u);

  ReportOptions options;
  options.gap_threshold_ns = 6'000'000;
  EXPECT_EQ(Build(options).utilization[0].gaps, 0u);
}

TEST_F(ReportModelTest, NvtxRangesGetTheGpuTimeOfTheirLaunches) {
  ReportModel m = Build();
  std::map<std::string, const NvtxRow*> rows;
  for (const NvtxRow& n : m.nvtx) rows[n.name] = &n;
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows["step"]->time.total_ns, 5'210'000u);
  EXPECT_EQ(rows["step"]->kernels, 4u);
  EXPECT_EQ(rows["step"]->gpu_time_ns, 100'000u);
  EXPECT_EQ(rows["forward"]->kernels, 3u);
  EXPECT_EQ(rows["forward"]->gpu_time_ns, 60'000u);
  EXPECT_EQ(rows["never_ended"]->unterminated, 1u);
  EXPECT_EQ(rows["never_ended"]->gpu_time_ns, 40'000u);
  EXPECT_EQ(rows["helper"]->kernels, 0u);
}

TEST_F(ReportModelTest, OverheadAndDataLoss) {
  ReportModel m = Build();
  ASSERT_EQ(m.overhead.cupti.size(), 1u);
  EXPECT_EQ(m.overhead.cupti[0].time.count, 2u);
  EXPECT_EQ(m.overhead.cupti_ns, 20'000u);
  EXPECT_EQ(m.overhead.callback_ns, 5'000u);
  EXPECT_EQ(m.overhead.wall_ns, 20'000'000u);
  EXPECT_EQ(m.overhead.in_app_ns(), 25'000u);
  ASSERT_EQ(m.loss.size(), 1u);
  EXPECT_EQ(m.loss[0].stat, "cupti_dropped_records");
  EXPECT_EQ(m.loss[0].value, 7u);  // the last snapshot, not the sum
  EXPECT_EQ(m.loss[0].severity, "data_loss");
}

// How launch stacks were unwound (stats 30-34): the overhead section's counts and line, a
// stack that differed from libunwind's as a warning, the JSON fields read back.
TEST(ReportUnwinding, TableCountersInTheOverheadAndLossSections) {
  testing::TempDir dir;
  const std::string path = dir.File("unwind.gpt");
  {
    auto writer = TraceWriter::Create(path);
    ASSERT_TRUE(writer.ok()) << writer.status().message();
    TraceWriter& w = **writer;
    ProcessRecord process;
    process.pid = kPid;
    process.start_ns = T0;
    process.end_ns = Us(1000);
    w.Add(process);
    const std::pair<StatId, uint64_t> stats[] = {
        {StatId::stacks_unwound, 1000},        {StatId::table_stacks, 950},
        {StatId::table_fallback_no_table, 30}, {StatId::table_fallback_rule, 20},
        {StatId::unwind_verified, 950},        {StatId::unwind_disagreements, 2}};
    for (const auto& [id, value] : stats) w.Add(StatRecord{kPid, static_cast<uint32_t>(id), value});
    ASSERT_TRUE(w.Close().ok());
  }
  auto built = BuildReport(path, {});
  ASSERT_TRUE(built.ok()) << built.status().message();
  const ReportModel& m = *built;
  EXPECT_EQ(m.overhead.stacks_unwound, 1000u);
  EXPECT_EQ(m.overhead.table_stacks, 950u);
  EXPECT_EQ(m.overhead.table_fallback_no_table, 30u);
  EXPECT_EQ(m.overhead.table_fallback_rule, 20u);
  EXPECT_EQ(m.overhead.unwind_verified, 950u);
  ASSERT_EQ(m.loss.size(), 1u);
  EXPECT_EQ(m.loss[0].stat, "unwind_disagreements");
  EXPECT_EQ(m.loss[0].severity, "warning");
  std::ostringstream text;
  ASSERT_TRUE(ExportReportText(m, {}, text).ok());
  EXPECT_NE(text.str().find("launch stacks from .eh_frame tables: 950 of 1,000; 50 fell back to "
                            "libunwind (30 for want of a table, 20 at a rule the tables do not "
                            "hold); 950 checked by libunwind"),
            std::string::npos)
      << text.str();
  auto read = ReportFromJson(ReportToJson(m, {}), "the baseline");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->overhead.table_stacks, 950u);
  EXPECT_EQ(read->overhead.table_fallback_rule, 20u);
  EXPECT_EQ(read->overhead.unwind_verified, 950u);
}

TEST_F(ReportModelTest, Filters) {
  ReportOptions by_name;
  by_name.kernel_regex = "^foo";  // matches the demangled name
  EXPECT_EQ(Build(by_name).kernels.size(), 1u);

  ReportOptions by_time;
  by_time.begin_ns = 1'000'000;  // from 1 ms after the trace start: only bar
  ReportModel late = Build(by_time);
  ASSERT_EQ(late.kernels.size(), 1u);
  EXPECT_EQ(late.kernels[0].name, "bar");
  EXPECT_EQ(late.memcpy.size(), 0u);

  ReportOptions by_nvtx;
  by_nvtx.nvtx_regex = "^forward$";
  ReportModel forward = Build(by_nvtx);
  ASSERT_EQ(forward.kernels.size(), 1u);
  EXPECT_EQ(forward.kernels[0].time.count, 3u);
  EXPECT_EQ(forward.summary.api_calls, 3u);
  ASSERT_EQ(forward.nvtx.size(), 1u);

  ReportOptions by_api;
  by_api.api_regex = "Malloc";
  ReportModel mallocs = Build(by_api);
  EXPECT_EQ(mallocs.runtime_api.size(), 1u);
  EXPECT_TRUE(mallocs.driver_api.empty());

  ReportOptions other_device;
  other_device.device = 1;
  ReportModel none = Build(other_device);
  EXPECT_TRUE(none.kernels.empty());
  EXPECT_TRUE(none.memory.empty());

  ReportOptions bad;
  bad.kernel_regex = "([";
  auto result = BuildReport(path_, bad);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ReportModelTest, SortAndTrim) {
  ReportModel m = Build();
  SortAndTrim(m, ReportSort::kCalls, 0);
  EXPECT_EQ(m.runtime_api[0].name, "cudaLaunchKernel");  // 4 calls
  SortAndTrim(m, ReportSort::kName, 1);
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].name, "_Z3fooPf");
  EXPECT_EQ(m.summary.kernels, 4u);  // totals are not trimmed
}

TEST_F(ReportModelTest, InMemoryTraceGivesTheSameReport) {
  auto trace = LoadTrace(path_);
  ASSERT_TRUE(trace.ok());
  auto from_memory = BuildReport(*trace, {});
  ASSERT_TRUE(from_memory.ok());
  std::ostringstream a, b;
  ASSERT_TRUE(ExportReportJson(Build(), {}, a).ok());
  ASSERT_TRUE(ExportReportJson(*from_memory, {}, b).ok());
  EXPECT_EQ(a.str(), b.str());
}

TEST_F(ReportModelTest, GoldenJsonTextAndCsv) {
  ReportModel m = Build();
  std::ostringstream json, text, csv;
  ASSERT_TRUE(ExportReportJson(m, {}, json).ok());
  ASSERT_TRUE(ExportReportText(m, {}, text).ok());
  ASSERT_TRUE(ExportReportCsv(m, {}, csv).ok());
  EXPECT_MATCHES_GOLDEN(json.str(), "report/hand_trace.json");
  EXPECT_MATCHES_GOLDEN(text.str(), "report/hand_trace.txt");
  EXPECT_MATCHES_GOLDEN(csv.str(), "report/hand_trace.csv");
}

// Baselines of `gpuperf diff` are read back from JSON: the model they give writes the
// same document again, and compares equal to the report it came from.
TEST_F(ReportModelTest, JsonReadsBackAsTheSameModel) {
  ReportModel m = Build();
  // What the hand trace lacks: a reader's loss without a process, a kernel on an unknown
  // device (no occupancy), a wait not on a stream, a warning.
  m.loss.push_back({std::nullopt, "chunks_corrupt", "data_loss", 2, "damaged chunks"});
  m.read_warnings.push_back("a.gpt: 2 damaged chunks skipped");
  m.kernels[0].configs.push_back({});
  m.sync.push_back(m.sync[0]);
  m.sync.back().stream.reset();
  m.sync.back().kind = SyncKind::kContextSynchronize;
  const nlohmann::ordered_json first = ReportToJson(m, {});
  auto read = ReportFromJson(first, "the baseline");
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(ReportToJson(*read, {}).dump(2), first.dump(2));
  EXPECT_EQ(read->kernels[0].configs[0].occupancy.limiter,
            m.kernels[0].configs[0].occupancy.limiter);
  EXPECT_EQ(read->leaks[0].address, 0xB000u);
  EXPECT_EQ(read->devices[0].compute_major, 9u);

  const ReportDiff diff = DiffReports(m, *read);
  for (const MetricDelta& d : diff.totals) EXPECT_EQ(d.base, d.now) << d.metric->name;
  ASSERT_EQ(diff.kernels.size(), 2u);
  for (const ItemDelta& k : diff.kernels) {
    for (const auto& [metric, values] : k.values) EXPECT_EQ(values.first, values.second) << metric;
  }

  // Sections left out of a document read as empty.
  ReportRenderOptions only_kernels;
  only_kernels.sections = {"kernels"};
  auto partial = ReportFromJson(ReportToJson(m, only_kernels), "the baseline");
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->kernels.size(), 2u);
  EXPECT_TRUE(partial->runtime_api.empty());
  EXPECT_EQ(partial->summary.kernels, 0u);
}

TEST_F(ReportModelTest, OneSectionCsvIsPlainCsv) {
  ReportRenderOptions options;
  ASSERT_TRUE(ParseReportSections("memcpy", options.sections).ok());
  std::ostringstream csv;
  ASSERT_TRUE(ExportReportCsv(Build(), options, csv).ok());
  EXPECT_EQ(csv.str(),
            "kind,count,bytes,total_ns,avg_ns,min_ns,max_ns,min_bytes,max_bytes,bandwidth_gbps\n"
            "HtoD,1,1000000,50000,50000,50000,50000,1000000,1000000,20.000000\n");
  std::vector<std::string> sections;
  EXPECT_FALSE(ParseReportSections("kernels,bogus", sections).ok());
}

}  // namespace
}  // namespace gpuperf
