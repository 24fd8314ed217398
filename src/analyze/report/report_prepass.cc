#include "analyze/report/report_prepass.h"

#include <algorithm>

#include "base/interval_union.h"

namespace gpuperf::report {

bool NeedsPrepass(const ReportOptions& options) {
  return options.begin_ns || options.end_ns || !options.nvtx_regex.empty();
}

PrepassSink::PrepassSink(const ReportOptions& options, Prepass& out)
    : out_(out), matcher_(options.nvtx_regex) {
  out_.nvtx_filter = matcher_.active();
}

void PrepassSink::OnString(StringId id, std::string_view text) {
  if (strings_.size() <= id) strings_.resize(id + 1);
  strings_[id] = std::string(text);
}

void PrepassSink::OnProcess(std::span<const ProcessRecord> records) {
  origin_.AddProcesses(records);
}

void PrepassSink::OnApi(std::span<const ApiRecord> records) {
  Starts(records);
  if (!out_.nvtx_filter) return;
  for (const auto& r : records) calls_.push_back({r.pid, r.tid, r.start_ns, r.correlation_id});
}

void PrepassSink::OnNvtx(std::span<const NvtxRecord> records) {
  Starts(records);
  if (!out_.nvtx_filter) return;
  for (const auto& r : records) {
    if (r.kind == NvtxKind::kRange && matcher_.Matches(r.name, strings_)) ranges_.push_back(r);
  }
}

void PrepassSink::Finish() {
  out_.origin_ns = origin_.ns();
  if (!out_.nvtx_filter) return;
  auto key = [](uint32_t pid, uint32_t tid) { return (uint64_t{pid} << 32) | tid; };
  // Per (pid, tid): the union of matching ranges; an unterminated range runs to the end.
  std::unordered_map<uint64_t, IntervalUnion> windows;
  std::sort(ranges_.begin(), ranges_.end(),
            [](const NvtxRecord& a, const NvtxRecord& b) { return a.start_ns < b.start_ns; });
  for (const NvtxRecord& r : ranges_) {
    windows[key(r.pid, r.tid)].Add(r.start_ns, r.end_ns ? r.end_ns : kNoTime);
  }
  for (const Call& c : calls_) {
    auto it = windows.find(key(c.pid, c.tid));
    if (it == windows.end()) continue;
    const auto& iv = it->second.intervals();
    auto after = std::upper_bound(iv.begin(), iv.end(), c.start,
                                  [](uint64_t v, const Interval& i) { return v < i.begin; });
    if (after != iv.begin() && c.start <= (after - 1)->end) {
      out_.nvtx_correlations[c.pid].insert(c.correlation_id);
    }
  }
}

}  // namespace gpuperf::report
