// The report's coordinator: reads the trace, applies the filters, keeps the shared state
// (ReportContext) and hands the records to the sections.
#include "analyze/report/report_builder.h"

#include <algorithm>

#include "analyze/demangle.h"
#include "analyze/report/report_prepass.h"

namespace gpuperf {
namespace report {
namespace {

// The sections, in the order their Finish runs. A new section is one more line here.
constexpr SectionFactory kSections[] = {
    MakeProcessesSection, MakeKernelsSection, MakeApiSection,         MakeCopiesSection,
    MakeSyncSection,      MakeMemorySection,  MakeUtilizationSection, MakeNvtxSection,
    MakeOverheadSection,  MakeLossSection,
};

// The records of `records` that `keep` accepts: the chunk itself when it accepts all
// (no filter, the common case), else a copy in `scratch`.
template <class R, class Keep>
std::span<const R> Kept(std::span<const R> records, std::vector<R>& scratch, Keep keep) {
  size_t i = 0;
  while (i < records.size() && keep(records[i])) ++i;
  if (i == records.size()) return records;
  scratch.assign(records.begin(), records.begin() + i);
  for (++i; i < records.size(); ++i) {
    if (keep(records[i])) scratch.push_back(records[i]);
  }
  return scratch;
}

}  // namespace

NameMatcher::NameMatcher(const std::string& pattern) : active_(!pattern.empty()) {
  if (active_) regex_ = std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
}

bool NameMatcher::Matches(StringId id, const std::vector<std::string>& strings) {
  if (!active_) return true;
  if (id >= cache_.size()) cache_.resize(std::max<size_t>(id + 1, strings.size()), -1);
  int8_t& cached = cache_[id];
  if (cached < 0) {
    static const std::string kEmpty;
    const std::string& name = id < strings.size() ? strings[id] : kEmpty;
    cached = std::regex_search(name, regex_) || std::regex_search(Demangle(name), regex_);
  }
  return cached;
}

ReportContext::ReportContext(const ReportOptions& options)
    : options_(options),
      kernel_matcher_(options.kernel_regex),
      api_matcher_(options.api_regex),
      symbols_(strings_),
      correlator_([](const GpuActivity&) {}) {
  strings_.assign(1, std::string());
  stacks_.assign(1, StackRecord());
}

std::vector<std::string> ReportContext::StackFrames(StackId id) {
  std::vector<std::string> out;
  if (id == 0 || id >= stacks_.size() || stacks_[id].id != id) return out;
  std::vector<Frame> frames;
  symbols_.ResolveStack(stacks_[id], frames);  // outermost first
  for (size_t i = frames.size(); i-- > 0 && out.size() < options_.stack_frames;) {
    const Frame& f = frames[i];
    std::string text(f.function);
    if (!f.file.empty()) {
      std::string_view file = f.file;
      size_t slash = file.rfind('/');
      if (slash != std::string_view::npos) file = file.substr(slash + 1);
      text += " (" + std::string(file) + (f.line ? ":" + std::to_string(f.line) : "") + ")";
    }
    out.push_back(std::move(text));
  }
  return out;
}

class ReportBuilder final : public RecordSink {
 public:
  ReportBuilder(const ReportOptions& options, const Prepass& prepass)
      : context_(options), options_(options), prepass_(prepass) {
    if (options.begin_ns || options.end_ns) {
      const uint64_t origin = prepass.origin_ns == kNoTime ? 0 : prepass.origin_ns;
      context_.time_begin_ = options.begin_ns ? origin + *options.begin_ns : 0;
      context_.time_end_ = options.end_ns ? origin + *options.end_ns : kNoTime;
    }
    for (SectionFactory make : kSections) sections_.push_back(make(context_));
  }

  void OnString(StringId id, std::string_view text) override {
    auto& strings = context_.strings_;
    if (strings.size() <= id) strings.resize(id + 1);
    strings[id] = std::string(text);
  }
  void OnStack(const StackRecord& stack) override {
    auto& stacks = context_.stacks_;
    if (stacks.size() <= stack.id) stacks.resize(stack.id + 1);
    stacks[stack.id] = stack;
  }
  void OnSymbol(const SymbolRecord& symbol) override { context_.symbols_.AddSymbol(symbol); }
  void OnModule(std::span<const ModuleRecord> records) override {
    for (const auto& r : records) context_.symbols_.AddModule(r);
  }
  void OnProcess(std::span<const ProcessRecord> records) override {
    for (const auto& r : records) {
      if (!PidOk(r.pid)) continue;
      Origin(r.start_ns);
      context_.processes_[r.pid].process = r;
    }
  }
  void OnDevice(std::span<const DeviceRecord> records) override {
    for (const auto& r : records) {
      if (PidOk(r.pid)) context_.devices_.push_back(r);
    }
  }
  void OnStat(std::span<const StatRecord> records) override {
    for (const auto& r : records) {
      if (PidOk(r.pid) && r.stat < kStatSlots)
        context_.processes_[r.pid].stats.Fold(r.stat, r.value);
    }
  }
  void OnLaunchLink(std::span<const LaunchLinkRecord> records) override {
    auto kept = Kept(records, links_, [&](const LaunchLinkRecord& l) { return PidOk(l.pid); });
    for (const LaunchLinkRecord& l : kept) {
      // A process the report lists: one with the stack of a call other than a launch.
      if (l.stack_id != 0 && !IsLaunchApi(l.api_name)) context_.processes_[l.pid];
    }
    context_.correlator_.AddLinks(kept);
  }

  void OnKernel(std::span<const KernelRecord> records) override {
    auto kept = Kept(records, kernels_, [&](const KernelRecord& k) { return GpuOk(k); });
    TouchGpu(kept);
    for (auto& s : sections_) s->OnKernels(kept);
  }
  void OnMemcpy(std::span<const MemcpyRecord> records) override {
    auto kept = Kept(records, memcpys_, [&](const MemcpyRecord& m) { return GpuOk(m); });
    TouchGpu(kept);
    for (auto& s : sections_) s->OnMemcpys(kept);
  }
  void OnMemset(std::span<const MemsetRecord> records) override {
    auto kept = Kept(records, memsets_, [&](const MemsetRecord& m) { return GpuOk(m); });
    TouchGpu(kept);
    for (auto& s : sections_) s->OnMemsets(kept);
  }
  void OnApi(std::span<const ApiRecord> records) override {
    auto kept = Kept(records, api_calls_, [&](const ApiRecord& a) {
      return PidOk(a.pid) && TimeOk(a.start_ns) && NvtxOk(a.pid, a.correlation_id);
    });
    links_.clear();
    for (const ApiRecord& a : kept) {
      Origin(a.start_ns);
      context_.processes_[a.pid].Touch(a.start_ns, a.end_ns);
      // A launch's API record says which thread launched when, as its link does: it joins
      // the kernels of recordings without stacks (no links) to their launch.
      if (IsLaunchApi(a.name)) {
        links_.push_back({a.pid, a.tid, a.correlation_id, 0, a.name, a.start_ns});
      }
    }
    context_.correlator_.AddLinks(links_);
    for (auto& s : sections_) s->OnApiCalls(kept);
  }
  void OnSync(std::span<const SyncRecord> records) override {
    auto kept = Kept(records, syncs_, [&](const SyncRecord& s) {
      return PidOk(s.pid) && TimeOk(s.start_ns) && NvtxOk(s.pid, s.correlation_id) &&
             (!options_.stream || s.stream_id == *options_.stream);
    });
    for (const SyncRecord& s : kept) {
      Origin(s.start_ns);
      context_.processes_[s.pid];
    }
    for (auto& s : sections_) s->OnSyncs(kept);
  }
  void OnMemory(std::span<const MemoryRecord> records) override {
    auto kept = Kept(records, memory_, [&](const MemoryRecord& m) {
      return PidOk(m.pid) && (!options_.device || m.device_id == *options_.device);
    });
    for (const MemoryRecord& m : kept) context_.processes_[m.pid];
    for (auto& s : sections_) s->OnMemory(kept);
  }
  void OnNvtx(std::span<const NvtxRecord> records) override {
    auto kept = Kept(records, nvtx_, [&](const NvtxRecord& n) {
      return PidOk(n.pid) && n.kind == NvtxKind::kRange && TimeOk(n.start_ns);
    });
    for (const NvtxRecord& n : kept) {
      Origin(n.start_ns);
      context_.processes_[n.pid];
    }
    for (auto& s : sections_) s->OnNvtxRanges(kept);
  }
  void OnOverhead(std::span<const OverheadRecord> records) override {
    auto kept = Kept(records, overheads_, [&](const OverheadRecord& o) { return PidOk(o.pid); });
    for (auto& s : sections_) s->OnOverheads(kept);
  }

  ReportModel Finish(const ReadReport& read_report) {
    context_.read_report_ = read_report;
    if (context_.origin_ == kNoTime) context_.origin_ = 0;
    const uint64_t origin = context_.origin_;
    ReportModel model;
    for (auto& s : sections_) s->Finish(model);
    uint64_t last = origin;
    for (const auto& [pid, p] : context_.processes_) {
      last = std::max(last, p.last_ns);
      if (p.process) last = std::max(last, p.process->end_ns);
    }
    model.summary.origin_ns = origin;
    model.summary.span_ns = last - origin;
    model.gap_threshold_ns = options_.gap_threshold_ns;
    SortAndTrim(model, ReportSort::kTotal, 0);
    return model;
  }

 private:
  bool PidOk(uint32_t pid) const { return !options_.pid || pid == *options_.pid; }
  bool TimeOk(uint64_t t) const { return context_.InTimeRange(t); }
  bool NvtxOk(uint32_t pid, uint32_t correlation_id) const {
    return prepass_.InNvtxRange(pid, correlation_id);
  }
  template <class GpuRecord>
  bool GpuOk(const GpuRecord& r) const {
    return PidOk(r.pid) && (!options_.device || r.device_id == *options_.device) &&
           (!options_.stream || r.stream_id == *options_.stream) && TimeOk(r.start_ns) &&
           NvtxOk(r.pid, r.correlation_id);
  }
  void Origin(uint64_t t) {
    if (t != 0 && t < context_.origin_) context_.origin_ = t;
  }
  // GPU work starts the report's clock and widens its process's span.
  template <class GpuRecord>
  void TouchGpu(std::span<const GpuRecord> records) {
    for (const GpuRecord& r : records) {
      Origin(r.start_ns);
      context_.processes_[r.pid].Touch(r.start_ns, r.end_ns);
    }
  }
  bool IsLaunchApi(StringId name) {
    if (name >= launch_api_.size())
      launch_api_.resize(std::max<size_t>(name + 1, context_.strings_.size()), -1);
    int8_t& cached = launch_api_[name];
    if (cached < 0) cached = context_.Str(name).find("Launch") != std::string::npos;
    return cached;
  }

  ReportContext context_;
  const ReportOptions& options_;
  const Prepass& prepass_;
  std::vector<std::unique_ptr<ReportSection>> sections_;
  std::vector<int8_t> launch_api_;  // by StringId: -1 unknown, else whether "Launch" is in it
  // Records that passed the filters, when some did not.
  std::vector<KernelRecord> kernels_;
  std::vector<MemcpyRecord> memcpys_;
  std::vector<MemsetRecord> memsets_;
  std::vector<ApiRecord> api_calls_;
  std::vector<SyncRecord> syncs_;
  std::vector<MemoryRecord> memory_;
  std::vector<NvtxRecord> nvtx_;
  std::vector<OverheadRecord> overheads_;
  std::vector<LaunchLinkRecord> links_;
};

namespace {

template <class Feed>
Result<ReportModel> Build(const ReportOptions& options, Feed feed) {
  try {
    Prepass prepass;
    if (NeedsPrepass(options)) {
      PrepassSink sink(options, prepass);
      ReadReport ignored;
      GP_RETURN_IF_ERROR(feed(sink, ignored));
      sink.Finish();
    }
    ReportBuilder builder(options, prepass);
    ReadReport read_report;
    GP_RETURN_IF_ERROR(feed(builder, read_report));
    return builder.Finish(read_report);
  } catch (const std::regex_error& e) {
    return Error(StatusCode::kInvalidArgument, std::string("bad regular expression: ") + e.what());
  }
}

}  // namespace
}  // namespace report

Result<ReportModel> BuildReport(const std::string& path, const ReportOptions& options) {
  return report::Build(options, [&](RecordSink& sink, ReadReport& read_report) {
    return ReadTrace(path, sink, &read_report);
  });
}

Result<ReportModel> BuildReport(const Trace& trace, const ReportOptions& options) {
  return report::Build(options, [&](RecordSink& sink, ReadReport& read_report) {
    ReplayTrace(trace, sink);
    read_report = trace.read_report;
    return Status::Ok();
  });
}

}  // namespace gpuperf
