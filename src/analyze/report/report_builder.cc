// The report's coordinator: reads the trace, applies the filters, keeps the shared state
// (ReportContext) and hands the records to the sections.
#include "analyze/report/report_builder.h"

#include <algorithm>
#include <filesystem>

#include "analyze/ranks/clock_shift_sink.h"
#include "analyze/ranks/job_ranks.h"
#include "analyze/report/report_prepass.h"
#include "base/demangle.h"
#include "format/file_format.h"

namespace gpuperf {
namespace report {
namespace {

// The sections, in the order their Finish runs, with the names ReportOptions::only_sections
// gives them. A new section is one more line here.
struct NamedSection {
  std::string_view name;
  SectionFactory make;
};
constexpr NamedSection kSections[] = {
    {"processes", MakeProcessesSection},
    {"kernels", MakeKernelsSection},
    {"api", MakeApiSection},
    {"copies", MakeCopiesSection},
    {"sync", MakeSyncSection},
    {"memory", MakeMemorySection},
    {"utilization", MakeUtilizationSection},
    {"nvtx", MakeNvtxSection},
    {"overhead", MakeOverheadSection},
    {"cpu", MakeCpuSection},
    {"loss", MakeLossSection},
    {"hardware", MakeHardwareSection},
    {"ranks", MakeRanksSection},
    {"energy", MakeEnergySection},
};
// The sections that read the API calls kept per thread (ProcessInfo::threads); sections
// handed in later (the insight rules) read them too.
constexpr std::string_view kSectionsReadingCalls[] = {"utilization", "nvtx"};

bool SectionWanted(const ReportOptions& options, std::string_view name) {
  return options.only_sections.empty() ||
         std::find(options.only_sections.begin(), options.only_sections.end(), name) !=
             options.only_sections.end();
}

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

// Hands `records` to `deliver` in slices small enough to stay in the core's cache while
// the coordinator and every section read them (a chunk of kernels is megabytes).
template <class R, class Deliver>
void InSlices(std::span<const R> records, Deliver deliver) {
  constexpr size_t kSliceRecords = 1024;
  for (size_t i = 0; i < records.size(); i += kSliceRecords) {
    deliver(records.subspan(i, std::min(kSliceRecords, records.size() - i)));
  }
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

ThreadCalls& ProcessInfo::Thread(uint32_t tid) {
  if (last_thread_ != nullptr && last_thread_->tid == tid) return *last_thread_;
  // Calls of a few threads interleave: a short scan beats hashing.
  if (threads.size() <= 8) {
    for (const auto& thread : threads) {
      if (thread->tid == tid) return *(last_thread_ = thread.get());
    }
  } else if (auto it = thread_by_tid_.find(tid); it != thread_by_tid_.end()) {
    return *(last_thread_ = it->second);
  }
  threads.push_back(std::make_unique<ThreadCalls>());
  threads.back()->tid = tid;
  thread_by_tid_.emplace(tid, threads.back().get());
  return *(last_thread_ = threads.back().get());
}

ReportContext::ReportContext(const ReportOptions& options)
    : options_(options),
      kernel_matcher_(options.kernel_regex),
      api_matcher_(options.api_regex),
      symbols_(strings_, {.python_internals = options.python_internals}),
      correlator_([](const GpuActivity&) {}) {
  strings_.assign(1, std::string());
  stacks_.assign(1, StackRecord());
}

std::vector<std::string> ReportContext::StackFrames(StackId id, uint32_t tid) {
  std::vector<std::string> out;
  std::vector<Frame> frames;
  ResolveStack(id, tid, frames);  // outermost first
  for (size_t i = frames.size(); i-- > 0 && out.size() < options_.stack_frames;) {
    out.push_back(FrameWithLocation(frames[i]));
  }
  return out;
}

void ReportContext::ResolveStack(StackId id, uint32_t tid, std::vector<Frame>& out) {
  if (id == 0 || id >= stacks_.size() || stacks_[id].id != id) return;
  symbols_.ResolveStack(stacks_[id], out, tid);
}

std::string ReportContext::ThreadName(uint32_t pid, uint32_t tid) const {
  auto it = thread_names_.find(uint64_t{pid} << 32 | tid);
  return it == thread_names_.end() ? std::string() : Str(it->second);
}

void ReportContext::LinkApiCalls(uint32_t pid) {
  if (std::find(api_calls_linked_.begin(), api_calls_linked_.end(), pid) !=
      api_calls_linked_.end()) {
    return;
  }
  api_calls_linked_.push_back(pid);
  const ProcessInfo* p = processes_.Find(pid);
  if (p == nullptr) return;
  std::vector<LaunchLinkRecord> links;
  for (const auto& thread : p->threads) {
    links.clear();
    for (const ApiCall& c : thread->calls) {
      links.push_back({pid, thread->tid, c.correlation_id, 0, c.name, c.start});
    }
    correlator_.AddLinks(links);  // the trace's own links came first and are kept
  }
}

class ReportBuilder final : public RecordSink {
 public:
  ReportBuilder(const ReportOptions& options, const Prepass& prepass,
                std::shared_ptr<const RankScan> scan, std::shared_ptr<const ClockAlignment> clocks,
                std::optional<RanksModel> job_ranks, std::span<const SectionFactory> later_sections,
                bool nvtx_in_trace)
      : context_(options), options_(options), prepass_(prepass) {
    context_.nvtx_in_trace_ = nvtx_in_trace;
    context_.rank_scan_ = std::move(scan);
    context_.clock_alignment_ = std::move(clocks);
    context_.job_ranks_ = std::move(job_ranks);
    if (options.begin_ns || options.end_ns) {
      const uint64_t origin = prepass.origin_ns == kNoTime ? 0 : prepass.origin_ns;
      context_.time_begin_ = options.begin_ns ? origin + *options.begin_ns : 0;
      context_.time_end_ = options.end_ns ? origin + *options.end_ns : kNoTime;
    }
    for (const NamedSection& named : kSections) {
      if (!SectionWanted(options, named.name)) continue;
      if (auto section = named.make(context_)) sections_.push_back(std::move(section));
    }
    keep_api_calls_ = !later_sections.empty() && SectionWanted(options, "insights");
    for (std::string_view name : kSectionsReadingCalls)
      keep_api_calls_ |= SectionWanted(options, name);
    if (!SectionWanted(options, "insights")) later_sections = {};
    for (SectionFactory make : later_sections) {
      if (auto section = make(context_)) sections_.push_back(std::move(section));
    }
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
  void OnPythonCode(const PythonCodeRecord& code) override {
    context_.symbols_.AddPythonCode(code);
  }
  void OnThread(std::span<const ThreadRecord> records) override {
    for (const auto& r : records) {
      context_.symbols_.AddThread(r);
      if (r.name != 0) context_.thread_names_[uint64_t{r.pid} << 32 | r.tid] = r.name;
    }
  }
  void OnModule(std::span<const ModuleRecord> records) override {
    for (const auto& r : records) context_.symbols_.AddModule(r);
  }
  void OnProcess(std::span<const ProcessRecord> records) override {
    for (const auto& r : records) {
      if (!PidOk(r.pid)) continue;
      Origin(r.start_ns);
      context_.processes_[r.pid].process = r;
      context_.recording_loss_.AddProcesses({&r, 1});
    }
  }
  void OnDevice(std::span<const DeviceRecord> records) override {
    for (const auto& r : records) {
      if (PidOk(r.pid)) context_.devices_.push_back(r);
    }
  }
  void OnStat(std::span<const StatRecord> records) override {
    for (const auto& r : records) {
      if (!PidOk(r.pid)) continue;
      if (r.stat < kStatSlots) context_.processes_[r.pid].stats.Fold(r.stat, r.value);
      context_.recording_loss_.AddStats({&r, 1});
    }
  }
  void OnLaunchLink(std::span<const LaunchLinkRecord> records) override {
    links_.clear();
    for (const LaunchLinkRecord& l : records) {
      if (!PidOk(l.pid)) continue;
      const CallKind kind = KindOf(l.api_name);
      // A process the report lists: one with the stack of a call other than a launch.
      if (l.stack_id != 0 && kind != CallKind::kLaunch) context_.processes_[l.pid];
      // The report reads the stacks of calls that wait or allocate (their records carry
      // the call's correlation id); those of GPU work are the flame graph's.
      if (kind == CallKind::kOther) links_.push_back(l);
    }
    context_.correlator_.AddLinks(links_);
    auto kept = Kept(records, kept_links_, [&](const LaunchLinkRecord& l) { return PidOk(l.pid); });
    for (auto& s : sections_) s->OnLaunchLinks(kept);
  }

  void OnKernel(std::span<const KernelRecord> records) override {
    InSlices(records, [&](std::span<const KernelRecord> slice) {
      auto kept = Kept(slice, kernels_, [&](const KernelRecord& k) { return GpuOk(k); });
      TouchGpu(kept);
      for (auto& s : sections_) s->OnKernels(kept);
    });
  }
  void OnMemcpy(std::span<const MemcpyRecord> records) override {
    InSlices(records, [&](std::span<const MemcpyRecord> slice) {
      auto kept = Kept(slice, memcpys_, [&](const MemcpyRecord& m) { return GpuOk(m); });
      TouchGpu(kept);
      for (auto& s : sections_) s->OnMemcpys(kept);
    });
  }
  void OnMemset(std::span<const MemsetRecord> records) override {
    InSlices(records, [&](std::span<const MemsetRecord> slice) {
      auto kept = Kept(slice, memsets_, [&](const MemsetRecord& m) { return GpuOk(m); });
      TouchGpu(kept);
      for (auto& s : sections_) s->OnMemsets(kept);
    });
  }
  void OnApi(std::span<const ApiRecord> records) override {
    InSlices(records, [&](std::span<const ApiRecord> slice) {
      auto kept = Kept(slice, api_calls_, [&](const ApiRecord& a) {
        return PidOk(a.pid) && TimeOk(a.start_ns) && NvtxOk(a.pid, a.correlation_id);
      });
      if (keep_api_calls_) {
        KeepApiCalls(kept);
      } else {
        TouchGpu(kept);
      }
      for (auto& s : sections_) s->OnApiCalls(kept);
    });
  }
  void OnNcclCollective(std::span<const NcclCollectiveRecord> records) override {
    std::vector<NcclCollectiveRecord> kept;
    for (const NcclCollectiveRecord& r : records) {
      if (PidOk(r.pid) && TimeOk(r.start_ns)) kept.push_back(r);
    }
    for (auto& s : sections_) s->OnNcclCollectives(kept);
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
  void OnCpuSample(std::span<const CpuSampleRecord> records) override {
    auto kept = Kept(records, cpu_samples_, [&](const CpuSampleRecord& c) {
      return PidOk(c.pid) && TimeOk(c.timestamp_ns);
    });
    for (auto& s : sections_) s->OnCpuSamples(kept);
  }
  void OnOffCpu(std::span<const OffCpuRecord> records) override {
    auto kept = Kept(records, off_cpus_,
                     [&](const OffCpuRecord& o) { return PidOk(o.pid) && TimeOk(o.start_ns); });
    for (auto& s : sections_) s->OnOffCpu(kept);
  }

  void OnMetricRange(std::span<const MetricRangeRecord> records) override {
    auto kept =
        Kept(records, metric_ranges_, [&](const MetricRangeRecord& r) { return PidOk(r.pid); });
    for (auto& s : sections_) s->OnMetricRanges(kept);
  }
  void OnMetricValue(std::span<const MetricValueRecord> records) override {
    auto kept =
        Kept(records, metric_values_, [&](const MetricValueRecord& v) { return PidOk(v.pid); });
    for (auto& s : sections_) s->OnMetricValues(kept);
  }
  void OnPcSample(const PcSampleRecord& sample) override {
    if (!PidOk(sample.pid)) return;
    for (auto& s : sections_) s->OnPcSample(sample);
  }
  void OnSassLine(const SassLineRecord& line) override {
    for (auto& s : sections_) s->OnSassLine(line);
  }

  ReportModel Finish(const ReadReport& read_report) {
    context_.read_report_ = read_report;
    if (context_.origin_ == kNoTime) context_.origin_ = 0;
    const uint64_t origin = context_.origin_;
    auto by_start = [](const ApiCall& a, const ApiCall& b) { return a.start < b.start; };
    for (auto& [pid, p] : context_.processes_) {
      for (auto& thread : p.threads) {
        if (!std::is_sorted(thread->calls.begin(), thread->calls.end(), by_start)) {
          std::stable_sort(thread->calls.begin(), thread->calls.end(), by_start);
        }
      }
    }
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
  // GPU work starts the report's clock and widens its process's span; so do API calls
  // (KeepApiCalls, or this when no section reads the calls themselves).
  template <class GpuRecord>
  void TouchGpu(std::span<const GpuRecord> records) {
    ProcessInfo* process = nullptr;
    for (const GpuRecord& r : records) {
      Origin(r.start_ns);
      if (process == nullptr || pid_ != r.pid) process = &context_.processes_[pid_ = r.pid];
      process->Touch(r.start_ns, r.end_ns);
    }
  }
  // API calls start the report's clock, widen their process's span and are kept per
  // thread (ProcessInfo::threads).
  void KeepApiCalls(std::span<const ApiRecord> records) {
    ProcessInfo* process = nullptr;
    ThreadCalls* thread = nullptr;
    for (const ApiRecord& a : records) {
      Origin(a.start_ns);
      if (process == nullptr || pid_ != a.pid) {
        process = &context_.processes_[pid_ = a.pid];
        thread = nullptr;
      }
      process->Touch(a.start_ns, a.end_ns);
      if (thread == nullptr || thread->tid != a.tid) thread = &process->Thread(a.tid);
      thread->calls.push_back({a.start_ns, a.end_ns, a.name, a.correlation_id});
    }
  }
  // What an API call does, by its name.
  enum class CallKind : int8_t { kUnknown = -1, kOther, kLaunch, kCopyOrSet };
  CallKind KindOf(StringId name) {
    if (name >= call_kind_.size()) {
      call_kind_.resize(std::max<size_t>(name + 1, context_.strings_.size()), CallKind::kUnknown);
    }
    CallKind& kind = call_kind_[name];
    if (kind == CallKind::kUnknown) {
      const std::string& text = context_.Str(name);
      kind = text.find("Launch") != std::string::npos ? CallKind::kLaunch
             : text.find("Memcpy") != std::string::npos || text.find("Memset") != std::string::npos
                 ? CallKind::kCopyOrSet
                 : CallKind::kOther;
    }
    return kind;
  }

  ReportContext context_;
  const ReportOptions& options_;
  const Prepass& prepass_;
  std::vector<std::unique_ptr<ReportSection>> sections_;
  std::vector<CallKind> call_kind_;  // by StringId
  bool keep_api_calls_ = true;       // some section reads ProcessInfo::threads
  uint32_t pid_ = 0;                 // of the process a loop last looked up
  // Records that passed the filters, when some did not.
  std::vector<KernelRecord> kernels_;
  std::vector<MemcpyRecord> memcpys_;
  std::vector<MemsetRecord> memsets_;
  std::vector<ApiRecord> api_calls_;
  std::vector<SyncRecord> syncs_;
  std::vector<MemoryRecord> memory_;
  std::vector<NvtxRecord> nvtx_;
  std::vector<OverheadRecord> overheads_;
  std::vector<CpuSampleRecord> cpu_samples_;
  std::vector<OffCpuRecord> off_cpus_;
  std::vector<LaunchLinkRecord> links_;
  std::vector<LaunchLinkRecord> kept_links_;
  std::vector<MetricRangeRecord> metric_ranges_;
  std::vector<MetricValueRecord> metric_values_;
};

namespace {

// `feed` reads the trace into a sink, on the aligned clock.
template <class Feed>
Result<ReportModel> Build(const ReportOptions& options, std::shared_ptr<const RankScan> scan,
                          std::shared_ptr<const ClockAlignment> clocks,
                          std::optional<RanksModel> job_ranks,
                          std::span<const SectionFactory> later_sections, bool nvtx_in_trace,
                          Feed feed) {
  // The rules are a room above the report: a caller that wants them hands their section in.
  if (options.insights && later_sections.empty()) {
    return Error(StatusCode::kInvalidArgument,
                 "report: insights asked for without the insights section "
                 "(analyze/insights/insights_section.h)");
  }
  try {
    Prepass prepass;
    if (NeedsPrepass(options)) {
      PrepassSink sink(options, prepass);
      ReadReport ignored;
      GP_RETURN_IF_ERROR(feed(sink, ignored));
      sink.Finish();
    }
    ReportBuilder builder(options, prepass, std::move(scan), std::move(clocks),
                          std::move(job_ranks), later_sections, nvtx_in_trace);
    ReadReport read_report;
    GP_RETURN_IF_ERROR(feed(builder, read_report));
    return builder.Finish(read_report);
  } catch (const std::regex_error& e) {
    return Error(StatusCode::kInvalidArgument, std::string("bad regular expression: ") + e.what());
  }
}

}  // namespace
}  // namespace report

Result<ReportModel> BuildReport(const std::string& path, const ReportOptions& options,
                                std::span<const report::SectionFactory> later_sections) {
  GP_ASSIGN_OR_RETURN(RankScan scanned, ScanRanks(path));
  auto scan = std::make_shared<const RankScan>(std::move(scanned));
  // The ranks of a job's directory are analysed first, its files in parallel: that reading
  // gives the clock alignment the report needs anyway on several hosts, and spares the
  // report's own reading the ranks' busy intervals. With a filter, the ranks section shows
  // what the filter lets through, from the report's reading.
  const bool unfiltered = !options.pid && !options.device && !options.stream && !options.begin_ns &&
                          !options.end_ns && options.nvtx_regex.empty();
  std::error_code ec;
  const bool job = unfiltered && scan->any_rank() && std::filesystem::is_directory(path, ec) &&
                   report::SectionWanted(options, "ranks");
  auto clocks = std::make_shared<ClockAlignment>();
  std::optional<RanksModel> job_ranks;
  if (job || ClockDomains(*scan) >= 2) {
    GP_ASSIGN_OR_RETURN(JobRanks analysed, AnalyzeJobRanks(path, *scan));
    *clocks = std::move(analysed.clocks);
    if (unfiltered && report::SectionWanted(options, "ranks")) {
      job_ranks = std::move(analysed.model);
    }
  }
  return BuildReport(path, options, std::move(scan), std::move(clocks), std::move(job_ranks),
                     later_sections);
}

Result<ReportModel> BuildReport(const std::string& path, const ReportOptions& options,
                                std::shared_ptr<const RankScan> scan,
                                std::shared_ptr<const ClockAlignment> clocks,
                                std::optional<RanksModel> job_ranks,
                                std::span<const report::SectionFactory> later_sections) {
  GP_ASSIGN_OR_RETURN(const auto counts, CountChunkRecords(path));
  const bool nvtx_in_trace = counts.count(format::kNvtxChunk) != 0;
  const ClockAlignment& aligned = *clocks;  // outlives the reads below
  ReadOptions read_options;
  read_options.threads = options.read_threads;
  if (options.read_only_files_of_pid) read_options.only_process = options.pid;
  return report::Build(options, std::move(scan), std::move(clocks), std::move(job_ranks),
                       later_sections, nvtx_in_trace,
                       [&](RecordSink& sink, ReadReport& read_report) {
                         return ReadTraceAligned(path, aligned, sink, &read_report, read_options);
                       });
}

Result<ReportModel> BuildReport(const Trace& trace, const ReportOptions& options,
                                std::span<const report::SectionFactory> later_sections) {
  auto scan = std::make_shared<const RankScan>(ScanRanks(trace));
  auto clocks = std::make_shared<const ClockAlignment>(AlignTraceClocks(trace, *scan));
  const ClockAlignment& aligned = *clocks;
  return report::Build(options, std::move(scan), std::move(clocks), std::nullopt, later_sections,
                       !trace.nvtxs.empty(), [&](RecordSink& sink, ReadReport& read_report) {
                         if (aligned.identity()) {
                           ReplayTrace(trace, sink);
                         } else {
                           ClockShiftSink shifted(sink, aligned);
                           ReplayTrace(trace, shifted);
                         }
                         read_report = trace.read_report;
                         return Status::Ok();
                       });
}

}  // namespace gpuperf
