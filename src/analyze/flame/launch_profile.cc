#include "analyze/flame/launch_profile.h"

#include <algorithm>
#include <cstdint>
#include <functional>

#include "format/file_format.h"

namespace gpuperf {
namespace {

// What the profile keeps beyond the launch sink: the API calls' durations (through the
// aggregator) and the clock pairs.
class LaunchProfileSink final : public LaunchSink {
 public:
  LaunchProfileSink(Correlator& correlator, LaunchCostAggregator& costs)
      : LaunchSink(correlator), costs_(costs) {}

  void OnApi(std::span<const ApiRecord> records) override { costs_.AddApiCalls(records); }
  void OnClock(std::span<const ClockRecord> records) override {
    clocks.insert(clocks.end(), records.begin(), records.end());
  }

  std::vector<ClockRecord> clocks;

 private:
  LaunchCostAggregator& costs_;
};

// The time span of the recording: processes and GPU work, CLOCK_MONOTONIC.
struct Span {
  uint64_t first = UINT64_MAX;
  uint64_t last = 0;
  void Add(uint64_t start, uint64_t end) {
    if (start != 0) first = std::min(first, start);
    last = std::max(last, end);
  }
  bool empty() const { return last == 0 || first > last; }
};

// Hands the API records read once more to the aggregator.
class RecallSink final : public RecordSink {
 public:
  explicit RecallSink(LaunchCostAggregator& costs) : costs_(costs) {}
  void OnApi(std::span<const ApiRecord> records) override { costs_.RecallApiCalls(records); }

 private:
  LaunchCostAggregator& costs_;
};

// `read` feeds every record of the trace to a sink; `read_report` is what it found.
// `read_api` feeds the API records alone, for the few calls that need them again.
Result<LaunchProfile> Build(const std::function<Status(RecordSink&)>& read,
                            const std::function<Status(RecordSink&)>& read_api,
                            const ReadReport& read_report) {
  LaunchCostAggregator costs;
  Span span;
  Correlator correlator([&](const GpuActivity& a) {
    costs.Add(a);
    span.Add(a.start_ns, a.end_ns);
  });
  LaunchProfileSink sink(correlator, costs);
  GP_RETURN_IF_ERROR(read(sink));
  correlator.Finish();
  if (costs.NeedsApiCallsAgain()) {
    RecallSink recall(costs);
    GP_RETURN_IF_ERROR(read_api(recall));
  }

  LaunchProfile profile;
  profile.costs = costs.Finish();
  for (const ProcessRecord& p : sink.processes) span.Add(p.start_ns, p.end_ns);
  if (!span.empty()) {
    profile.first_ns = span.first;
    profile.last_ns = span.last;
  }
  if (!sink.clocks.empty()) {
    profile.realtime_offset_ns = static_cast<int64_t>(sink.clocks.front().realtime_ns) -
                                 static_cast<int64_t>(sink.clocks.front().monotonic_ns);
  }
  profile.joins = correlator.stats().all();
  profile.loss = SummarizeDataLoss(read_report, sink.loss.Rows());
  profile.names = std::move(static_cast<StackNames&>(sink));
  return profile;
}

}  // namespace

Result<LaunchProfile> BuildLaunchProfile(const std::string& trace_path, ReadReport* report) {
  ReadReport read_report;
  // The reading is done before the summary of what it lost is made.
  auto read = [&](RecordSink& sink) { return ReadTrace(trace_path, sink, &read_report); };
  auto read_api = [&](RecordSink& sink) {
    ReadReport again;  // what the first read found is what the profile says
    const uint16_t api_chunks[] = {format::kApiChunk};
    return ReadTraceChunks(trace_path, api_chunks, sink, &again);
  };
  Result<LaunchProfile> profile = Build(read, read_api, read_report);
  if (report) *report = read_report;
  return profile;
}

LaunchProfile BuildLaunchProfile(const Trace& trace) {
  Result<LaunchProfile> profile = Build(
      [&](RecordSink& sink) {
        ReplayTrace(trace, sink);
        return Status::Ok();
      },
      [&](RecordSink& sink) {
        sink.OnApi(trace.apis);
        return Status::Ok();
      },
      trace.read_report);
  return std::move(profile).value();
}

}  // namespace gpuperf
