// Which fields the clock shift moves, for every record type: a new record type with a time
// (or with a duration named *_ns) must show up here.
#include "analyze/ranks/clock_shift_sink.h"

#include <gtest/gtest.h>

#include <string>

#include "format/record_schema.h"

namespace gpuperf {
namespace {

// The fields of `R` that a shift of 1000 changes, each set to 5 beforehand.
template <class R>
std::string ShiftedFields() {
  R record{};
  format::ForEachField(record, [](const char*, auto& value, format::FieldEnc) {
    using FieldT = std::remove_cvref_t<decltype(value)>;
    if constexpr (!std::is_enum_v<FieldT>) value = static_cast<FieldT>(5);
  });
  R shifted = record;
  ShiftRecordTimes(shifted, 1000);
  std::string names;
  std::vector<std::string> before, after;
  format::ForEachField(record, [&](const char* name, const auto& value, format::FieldEnc) {
    before.push_back(std::string(name) + "=" + std::to_string(format::FieldToU64(value)));
  });
  format::ForEachField(shifted, [&](const char* name, const auto& value, format::FieldEnc) {
    after.push_back(std::string(name) + "=" + std::to_string(format::FieldToU64(value)));
  });
  for (size_t i = 0; i < before.size(); ++i) {
    if (before[i] != after[i]) names += (names.empty() ? "" : " ") + after[i];
  }
  return names;
}

TEST(ClockShift, MovesEveryTimestampAndNothingElse) {
  std::map<std::string, std::string> shifted;
#define GP_SHIFTED(Type, name, plural, number) shifted[#name] = ShiftedFields<Type##Record>();
  GPUPERF_FIXED_RECORD_TYPES(GP_SHIFTED)
#undef GP_SHIFTED
  const std::map<std::string, std::string> expected = {
      {"process", "start_ns=1005 end_ns=1005"},
      {"thread", ""},
      {"device", ""},
      {"context", ""},
      {"kernel", "start_ns=1005 end_ns=1005"},
      {"memcpy", "start_ns=1005 end_ns=1005"},
      {"memset", "start_ns=1005 end_ns=1005"},
      {"api", "start_ns=1005 end_ns=1005"},
      {"sync", "start_ns=1005 end_ns=1005"},
      {"memory", "timestamp_ns=1005"},
      {"nvtx", "start_ns=1005 end_ns=1005"},
      {"overhead", "start_ns=1005 end_ns=1005"},
      {"launch_link", "timestamp_ns=1005"},
      {"external_correlation", ""},
      {"clock", "monotonic_ns=1005"},  // realtime_ns is wall-clock time: never shifted
      {"stat", ""},
      {"module", ""},
      {"cpu_sample", "timestamp_ns=1005"},  // weight_ns and blocked_ns are durations
      {"off_cpu", "start_ns=1005 end_ns=1005"},
      {"metric_range", "start_ns=1005 end_ns=1005"},
      {"metric_value", ""},
      {"rank", ""},
      {"power_sample", "timestamp_ns=1005"},
      {"nccl_collective", "start_ns=1005 end_ns=1005"},
      {"nccl_comm", "timestamp_ns=1005"},
  };
  EXPECT_EQ(shifted, expected);
}

TEST(ClockShift, ZeroMeansUnknownAndStaysZero) {
  ProcessRecord p;
  p.start_ns = 10;
  p.end_ns = 0;  // died before its final flush
  ShiftRecordTimes(p, -4);
  EXPECT_EQ(p.start_ns, 6u);
  EXPECT_EQ(p.end_ns, 0u);
}

class Collect final : public RecordSink {
 public:
  void OnKernel(std::span<const KernelRecord> records) override {
    kernels.insert(kernels.end(), records.begin(), records.end());
  }
  void OnPcSample(const PcSampleRecord& sample) override { pc_samples.push_back(sample); }
  void OnCubin(const CubinRecord&) override { ++cubins; }
  void OnSassLine(const SassLineRecord&) override { ++sass_lines; }
  std::vector<KernelRecord> kernels;
  std::vector<PcSampleRecord> pc_samples;
  int cubins = 0, sass_lines = 0;
};

TEST(ClockShift, PcSamplingRecordsPassThrough) {
  Collect inner;
  ClockAlignment identity;
  ClockShiftSink sink(inner, identity);
  PcSampleRecord sample;
  sample.pid = 3;
  sample.pc_offset = 0x40;
  sample.stalls = {{7, 12}};
  sink.OnPcSample(sample);
  sink.OnCubin(CubinRecord{});
  sink.OnSassLine(SassLineRecord{});
  ASSERT_EQ(inner.pc_samples.size(), 1u);
  EXPECT_EQ(inner.pc_samples[0].pc_offset, 0x40u);
  EXPECT_EQ(inner.pc_samples[0].stalls[0].samples, 12u);
  EXPECT_EQ(inner.cubins, 1);
  EXPECT_EQ(inner.sass_lines, 1);
}

TEST(ClockShift, SinkShiftsEachProcessByItsHostsOffset) {
  // An alignment with pid 2 on a host 7 s ahead (built the way AlignClocks does).
  RankScan scan;
  for (uint32_t pid : {1u, 2u}) {
    ProcessIdentity& p = scan.processes[pid];
    p.pid = pid;
    p.rank = static_cast<int32_t>(pid - 1);
    p.hostname = pid == 1 ? "a" : "b";
    p.boot_id = p.hostname;
    const uint64_t ahead = pid == 2 ? 7'000'000'000 : 0;
    p.clocks.push_back(ClockRecord{pid, 100 + ahead, 1'000'000'000'100});
  }
  const ClockAlignment clocks = AlignClocks(scan, nullptr);
  ASSERT_EQ(clocks.OffsetOf(2), -7'000'000'000);
  Collect inner;
  ClockShiftSink sink(inner, clocks);
  KernelRecord a, b;
  a.pid = 1;
  a.start_ns = 500;
  a.end_ns = 600;
  b.pid = 2;
  b.start_ns = 7'000'000'500;
  b.end_ns = 7'000'000'600;
  const KernelRecord batch[] = {a, b, a};
  sink.OnKernel(batch);
  ASSERT_EQ(inner.kernels.size(), 3u);
  EXPECT_EQ(inner.kernels[0].start_ns, 500u);
  EXPECT_EQ(inner.kernels[1].start_ns, 500u);
  EXPECT_EQ(inner.kernels[1].end_ns, 600u);
  EXPECT_EQ(inner.kernels[2].end_ns, 600u);
}

}  // namespace
}  // namespace gpuperf
