#include "analyze/report_model.h"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <memory>
#include <regex>
#include <unordered_map>
#include <unordered_set>

#include "analyze/cuda_errors.h"
#include "analyze/data_loss.h"
#include "analyze/demangle.h"
#include "analyze/interval_union.h"
#include "analyze/symbol_table.h"
#include "gpuperf/stats.h"

namespace gpuperf {
namespace {

constexpr uint64_t kNoTime = std::numeric_limits<uint64_t>::max();
// Correlation ids are small and dense (CUPTI counts up from 1); tables indexed by them
// are vectors up to this id, hash maps above it (damaged or unusual traces).
constexpr uint32_t kDenseCorrelationLimit = 1u << 27;

uint64_t Duration(uint64_t start, uint64_t end) {
  return end > start ? end - start : 0;
}

void AddDuration(DurationStats& s, uint64_t ns) {
  if (s.count == 0 || ns < s.min_ns) s.min_ns = ns;
  if (ns > s.max_ns) s.max_ns = ns;
  ++s.count;
  s.total_ns += ns;
}

// Per-correlation-id values of one process: dense where ids are dense.
template <class T>
class CorrelationTable {
 public:
  T& operator[](uint32_t id) {
    if (id < kDenseCorrelationLimit) {
      if (id >= dense_.size()) dense_.resize(std::max<size_t>(id + 1, dense_.size() * 2));
      return dense_[id];
    }
    return sparse_[id];
  }
  const T* Find(uint32_t id) const {
    if (id < dense_.size()) return &dense_[id];
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }

 private:
  std::vector<T> dense_;
  std::unordered_map<uint32_t, T> sparse_;
};

// An API call, kept per thread for the idle-gap and NVTX analyses.
struct ApiCall {
  uint64_t start = 0;
  uint64_t end = 0;
  StringId name = 0;
  uint32_t correlation_id = 0;
};

struct ThreadState {
  uint32_t tid = 0;
  std::vector<ApiCall> calls;
  std::vector<uint64_t> max_end_prefix;  // built on demand: max end of calls[0..i]
};

// GPU time and kernel count of one correlation id, packed in 8 bytes because there is
// one per launch (tens of millions): 48 bits of ns (78 hours), 16 bits of count.
struct GpuWork {
  uint64_t packed = 0;
  static constexpr uint64_t kNsMask = (uint64_t{1} << 48) - 1;
  uint64_t ns() const { return packed & kNsMask; }
  uint32_t kernels() const { return static_cast<uint32_t>(packed >> 48); }
  void Add(uint64_t kernel_ns) {
    const uint64_t sum = std::min(ns() + kernel_ns, kNsMask);
    const uint64_t count = std::min<uint64_t>(kernels() + 1, 0xFFFF);
    packed = (count << 48) | sum;
  }
};

// Kernel durations kept for the median: 4 bytes each until one does not fit.
class DurationList {
 public:
  void Add(uint64_t ns) {
    if (!wide_.empty() || ns > UINT32_MAX) {
      if (wide_.empty()) wide_.assign(narrow_.begin(), narrow_.end());
      std::vector<uint32_t>().swap(narrow_);
      wide_.push_back(ns);
    } else {
      narrow_.push_back(static_cast<uint32_t>(ns));
    }
  }
  // Lower median; consumes the list.
  uint64_t TakeMedian() {
    uint64_t median = wide_.empty() ? Median(narrow_) : Median(wide_);
    std::vector<uint32_t>().swap(narrow_);
    std::vector<uint64_t>().swap(wide_);
    return median;
  }

 private:
  template <class T>
  static uint64_t Median(std::vector<T>& v) {
    if (v.empty()) return 0;
    auto mid = v.begin() + (v.size() - 1) / 2;
    std::nth_element(v.begin(), mid, v.end());
    return *mid;
  }
  std::vector<uint32_t> narrow_;
  std::vector<uint64_t> wide_;
};

struct LinkInfo {
  StackId stack = 0;
  StringId api = 0;
};

struct DeviceBusy {
  uint32_t device = 0;
  IntervalUnion busy;
  uint64_t kernel_ns = 0;
};

struct ProcessState {
  uint32_t pid = 0;
  uint64_t first_ns = kNoTime;  // CUDA activity span (API calls and GPU work)
  uint64_t last_ns = 0;
  std::optional<ProcessRecord> process;
  std::vector<std::unique_ptr<ThreadState>> threads;
  std::unordered_map<uint32_t, ThreadState*> thread_by_tid;
  CorrelationTable<GpuWork> gpu_by_correlation;
  std::unordered_map<uint32_t, LinkInfo> links;  // stacks of non-launch API calls
  std::vector<DeviceBusy> devices;
  std::vector<MemoryRecord> memory;
  std::vector<SyncRecord> syncs;
  std::vector<NvtxRecord> nvtx;
  std::array<uint64_t, kMaxStatId + 1> stats{};

  void Touch(uint64_t start, uint64_t end) {
    first_ns = std::min(first_ns, start);
    last_ns = std::max(last_ns, end);
  }
  ThreadState& Thread(uint32_t tid) {
    auto it = thread_by_tid.find(tid);
    if (it != thread_by_tid.end()) return *it->second;
    threads.push_back(std::make_unique<ThreadState>());
    threads.back()->tid = tid;
    thread_by_tid.emplace(tid, threads.back().get());
    return *threads.back();
  }
  DeviceBusy& Device(uint32_t device) {
    for (DeviceBusy& d : devices) {
      if (d.device == device) return d;
    }
    devices.push_back(DeviceBusy{device, {}, 0});
    return devices.back();
  }
};

struct ConfigAgg {
  KernelConfig config;
  uint32_t pid = 0;
  uint32_t device = 0;
};

struct KernelAgg {
  StringId name = 0;
  DurationStats time;
  DurationList durations;
  std::vector<ConfigAgg> configs;
  size_t last_config = 0;
};

struct ApiAgg {
  StringId name = 0;
  ApiDomain domain = ApiDomain::kUnknown;
  DurationStats time;
  uint64_t failures = 0;
  std::vector<std::pair<int32_t, uint64_t>> errors;  // code -> calls
};

struct CopyAgg {
  DurationStats time;
  uint64_t bytes = 0;
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
};

// Which StringIds match a regex, decided once per id.
class NameMatcher {
 public:
  explicit NameMatcher(const std::string& pattern) : active_(!pattern.empty()) {
    if (active_) regex_ = std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
  }
  bool active() const { return active_; }
  bool Matches(StringId id, const std::vector<std::string>& strings) {
    if (!active_) return true;
    if (id >= cache_.size()) cache_.resize(std::max<size_t>(id + 1, strings.size()), -1);
    int8_t& cached = cache_[id];
    if (cached < 0) {
      const std::string& name = id < strings.size() ? strings[id] : empty_;
      cached = std::regex_search(name, regex_) || std::regex_search(Demangle(name), regex_);
    }
    return cached;
  }

 private:
  bool active_;
  std::regex regex_;
  std::vector<int8_t> cache_;
  std::string empty_;
};

// What the first pass learns for filters that need the whole trace.
struct Prepass {
  uint64_t origin_ns = kNoTime;
  bool nvtx_filter = false;
  // Per process: correlation ids of API calls made inside a matching NVTX range.
  std::unordered_map<uint32_t, std::unordered_set<uint32_t>> nvtx_correlations;
};

template <class R>
uint64_t StartOf(const R& r) {
  return r.start_ns;
}

class PrepassSink final : public RecordSink {
 public:
  PrepassSink(const ReportOptions& options, Prepass& out)
      : out_(out), matcher_(options.nvtx_regex) {
    out_.nvtx_filter = matcher_.active();
  }
  void OnString(StringId id, std::string_view text) override {
    if (strings_.size() <= id) strings_.resize(id + 1);
    strings_[id] = std::string(text);
  }
  void OnProcess(std::span<const ProcessRecord> records) override {
    for (const auto& r : records) Origin(r.start_ns);
  }
  void OnKernel(std::span<const KernelRecord> records) override { Starts(records); }
  void OnMemcpy(std::span<const MemcpyRecord> records) override { Starts(records); }
  void OnMemset(std::span<const MemsetRecord> records) override { Starts(records); }
  void OnSync(std::span<const SyncRecord> records) override { Starts(records); }
  void OnApi(std::span<const ApiRecord> records) override {
    Starts(records);
    if (!out_.nvtx_filter) return;
    for (const auto& r : records) calls_.push_back({r.pid, r.tid, r.start_ns, r.correlation_id});
  }
  void OnNvtx(std::span<const NvtxRecord> records) override {
    Starts(records);
    if (!out_.nvtx_filter) return;
    for (const auto& r : records) {
      if (r.kind == NvtxKind::kRange && matcher_.Matches(r.name, strings_)) ranges_.push_back(r);
    }
  }

  // Turns matching ranges and API calls into the per-process correlation sets.
  void Finish() {
    if (!out_.nvtx_filter) return;
    // Per (pid, tid): the union of matching ranges; an unterminated range runs to the end.
    std::unordered_map<uint64_t, IntervalUnion> windows;
    std::sort(ranges_.begin(), ranges_.end(),
              [](const NvtxRecord& a, const NvtxRecord& b) { return a.start_ns < b.start_ns; });
    for (const NvtxRecord& r : ranges_) {
      windows[Key(r.pid, r.tid)].Add(r.start_ns, r.end_ns ? r.end_ns : kNoTime);
    }
    for (const Call& c : calls_) {
      auto it = windows.find(Key(c.pid, c.tid));
      if (it == windows.end()) continue;
      const auto& iv = it->second.intervals();
      auto after = std::upper_bound(iv.begin(), iv.end(), c.start,
                                    [](uint64_t v, const Interval& i) { return v < i.begin; });
      if (after != iv.begin() && c.start <= (after - 1)->end) {
        out_.nvtx_correlations[c.pid].insert(c.correlation_id);
      }
    }
  }

 private:
  struct Call {
    uint32_t pid, tid;
    uint64_t start;
    uint32_t correlation_id;
  };
  static uint64_t Key(uint32_t pid, uint32_t tid) { return (uint64_t{pid} << 32) | tid; }
  void Origin(uint64_t t) {
    if (t != 0) out_.origin_ns = std::min(out_.origin_ns, t);
  }
  template <class R>
  void Starts(std::span<const R> records) {
    for (const auto& r : records) Origin(StartOf(r));
  }

  Prepass& out_;
  NameMatcher matcher_;
  std::vector<std::string> strings_;
  std::vector<Call> calls_;
  std::vector<NvtxRecord> ranges_;
};

class ReportBuilder final : public RecordSink {
 public:
  ReportBuilder(const ReportOptions& options, const Prepass& prepass)
      : options_(options),
        prepass_(prepass),
        kernel_matcher_(options.kernel_regex),
        api_matcher_(options.api_regex),
        symbols_(strings_) {
    strings_.assign(1, std::string());
    stacks_.assign(1, StackRecord());
    if (options.begin_ns || options.end_ns) {
      const uint64_t origin = prepass.origin_ns == kNoTime ? 0 : prepass.origin_ns;
      time_begin_ = options.begin_ns ? origin + *options.begin_ns : 0;
      time_end_ = options.end_ns ? origin + *options.end_ns : kNoTime;
    }
  }

  void OnString(StringId id, std::string_view text) override {
    if (strings_.size() <= id) strings_.resize(id + 1);
    strings_[id] = std::string(text);
  }
  void OnStack(const StackRecord& stack) override {
    if (stacks_.size() <= stack.id) stacks_.resize(stack.id + 1);
    stacks_[stack.id] = stack;
  }
  void OnSymbol(const SymbolRecord& symbol) override { symbols_.AddSymbol(symbol); }
  void OnModule(std::span<const ModuleRecord> records) override {
    for (const auto& r : records) symbols_.AddModule(r);
  }
  void OnProcess(std::span<const ProcessRecord> records) override {
    for (const auto& r : records) {
      if (!PidOk(r.pid)) continue;
      Origin(r.start_ns);
      Process(r.pid).process = r;
    }
  }
  void OnDevice(std::span<const DeviceRecord> records) override {
    for (const auto& r : records) {
      if (PidOk(r.pid)) devices_.push_back(r);
    }
  }
  void OnStat(std::span<const StatRecord> records) override {
    // Counters are cumulative snapshots: the largest value seen is the final one.
    for (const auto& r : records) {
      if (!PidOk(r.pid) || r.stat > kMaxStatId) continue;
      uint64_t& value = Process(r.pid).stats[r.stat];
      value = std::max(value, r.value);
    }
  }

  void OnKernel(std::span<const KernelRecord> records) override {
    for (const KernelRecord& k : records) {
      DeviceBusy* device = AddGpuInterval(k);
      if (device == nullptr) continue;
      const uint64_t ns = Duration(k.start_ns, k.end_ns);
      device->kernel_ns += ns;
      if (!kernel_matcher_.Matches(k.name, strings_)) continue;
      Process(k.pid).gpu_by_correlation[k.correlation_id].Add(ns);
      KernelAgg& agg = Kernel(k.name);
      AddDuration(agg.time, ns);
      agg.durations.Add(ns);
      CountConfig(agg, k);
      ++summary_.kernels;
      summary_.kernel_ns += ns;
    }
  }

  void OnMemcpy(std::span<const MemcpyRecord> records) override {
    for (const MemcpyRecord& m : records) {
      if (AddGpuInterval(m) == nullptr) continue;
      const uint64_t ns = Duration(m.start_ns, m.end_ns);
      CopyAgg& agg = memcpy_[static_cast<size_t>(m.kind) % memcpy_.size()];
      if (agg.time.count == 0 || m.bytes < agg.min_bytes) agg.min_bytes = m.bytes;
      agg.max_bytes = std::max(agg.max_bytes, m.bytes);
      agg.bytes += m.bytes;
      AddDuration(agg.time, ns);
      ++summary_.memcpys;
      summary_.memcpy_ns += ns;
      summary_.memcpy_bytes += m.bytes;
    }
  }

  void OnMemset(std::span<const MemsetRecord> records) override {
    for (const MemsetRecord& m : records) {
      if (AddGpuInterval(m) == nullptr) continue;
      const uint64_t ns = Duration(m.start_ns, m.end_ns);
      CopyAgg& agg = memset_[static_cast<size_t>(m.memory_kind) % memset_.size()];
      agg.bytes += m.bytes;
      AddDuration(agg.time, ns);
      ++summary_.memsets;
      summary_.memset_ns += ns;
    }
  }

  void OnApi(std::span<const ApiRecord> records) override {
    ThreadState* thread = nullptr;
    ProcessState* process = nullptr;
    for (const ApiRecord& a : records) {
      if (!PidOk(a.pid) || !TimeOk(a.start_ns) || !NvtxOk(a.pid, a.correlation_id)) continue;
      if (process == nullptr || process->pid != a.pid) {
        process = &Process(a.pid);
        thread = nullptr;
      }
      if (thread == nullptr || thread->tid != a.tid) thread = &process->Thread(a.tid);
      Origin(a.start_ns);
      process->Touch(a.start_ns, a.end_ns);
      thread->calls.push_back({a.start_ns, a.end_ns, a.name, a.correlation_id});
      if (!api_matcher_.Matches(a.name, strings_)) continue;
      const uint64_t ns = Duration(a.start_ns, a.end_ns);
      ApiAgg& agg = Api(a.name, a.domain);
      AddDuration(agg.time, ns);
      ++summary_.api_calls;
      summary_.api_ns += ns;
      if (a.return_code != 0) CountError(agg, a.return_code);
    }
  }

  void OnLaunchLink(std::span<const LaunchLinkRecord> records) override {
    // Kernel launch stacks are the flame graph's business; the report needs the stacks
    // of allocations and synchronizations, so it keeps links of other calls only.
    for (const LaunchLinkRecord& l : records) {
      if (l.stack_id == 0 || !PidOk(l.pid) || IsLaunchApi(l.api_name)) continue;
      Process(l.pid).links[l.correlation_id] = {l.stack_id, l.api_name};
    }
  }

  void OnSync(std::span<const SyncRecord> records) override {
    for (const SyncRecord& s : records) {
      if (!PidOk(s.pid) || !TimeOk(s.start_ns) || !NvtxOk(s.pid, s.correlation_id)) continue;
      if (options_.stream && s.stream_id != *options_.stream) continue;
      Origin(s.start_ns);
      Process(s.pid).syncs.push_back(s);
    }
  }

  void OnMemory(std::span<const MemoryRecord> records) override {
    for (const MemoryRecord& m : records) {
      if (!PidOk(m.pid) || (options_.device && m.device_id != *options_.device)) continue;
      Process(m.pid).memory.push_back(m);
    }
  }

  void OnNvtx(std::span<const NvtxRecord> records) override {
    for (const NvtxRecord& n : records) {
      if (!PidOk(n.pid) || n.kind != NvtxKind::kRange || !TimeOk(n.start_ns)) continue;
      Origin(n.start_ns);
      Process(n.pid).nvtx.push_back(n);
    }
  }

  void OnOverhead(std::span<const OverheadRecord> records) override {
    for (const OverheadRecord& o : records) {
      if (!PidOk(o.pid)) continue;
      AddDuration(overhead_[static_cast<size_t>(o.kind) % overhead_.size()],
                  Duration(o.start_ns, o.end_ns));
    }
  }

  ReportModel Finish(const ReadReport& read_report);

 private:
  const std::string& Str(StringId id) const {
    static const std::string kEmpty;
    return id < strings_.size() ? strings_[id] : kEmpty;
  }
  bool PidOk(uint32_t pid) const { return !options_.pid || pid == *options_.pid; }
  bool TimeOk(uint64_t t) const { return t >= time_begin_ && t < time_end_; }
  bool NvtxOk(uint32_t pid, uint32_t correlation_id) const {
    if (!prepass_.nvtx_filter) return true;
    auto it = prepass_.nvtx_correlations.find(pid);
    return it != prepass_.nvtx_correlations.end() && it->second.count(correlation_id) > 0;
  }
  bool GpuOk(uint32_t pid, uint32_t device, uint32_t stream, uint64_t start,
             uint32_t correlation_id) const {
    return PidOk(pid) && (!options_.device || device == *options_.device) &&
           (!options_.stream || stream == *options_.stream) && TimeOk(start) &&
           NvtxOk(pid, correlation_id);
  }
  // What kernels, copies and sets share: the filters, the report's span and the device's
  // busy time. Returns the device's state, or nullptr for a record the filters leave out.
  template <class GpuRecord>
  DeviceBusy* AddGpuInterval(const GpuRecord& r) {
    if (!GpuOk(r.pid, r.device_id, r.stream_id, r.start_ns, r.correlation_id)) return nullptr;
    ProcessState& p = Process(r.pid);
    Origin(r.start_ns);
    p.Touch(r.start_ns, r.end_ns);
    DeviceBusy& device = p.Device(r.device_id);
    device.busy.Add(r.start_ns, r.end_ns);
    return &device;
  }
  void Origin(uint64_t t) {
    if (t != 0 && t < origin_) origin_ = t;
  }

  ProcessState& Process(uint32_t pid) {
    if (last_process_ != nullptr && last_process_->pid == pid) return *last_process_;
    auto it = process_by_pid_.find(pid);
    if (it == process_by_pid_.end()) {
      processes_.push_back(std::make_unique<ProcessState>());
      processes_.back()->pid = pid;
      it = process_by_pid_.emplace(pid, processes_.back().get()).first;
    }
    last_process_ = it->second;
    return *last_process_;
  }

  KernelAgg& Kernel(StringId name) {
    if (name >= kernel_slot_.size())
      kernel_slot_.resize(std::max<size_t>(name + 1, strings_.size()), -1);
    int32_t& slot = kernel_slot_[name];
    if (slot < 0) {
      slot = static_cast<int32_t>(kernels_.size());
      kernels_.push_back({});
      kernels_.back().name = name;
    }
    return kernels_[slot];
  }

  ApiAgg& Api(StringId name, ApiDomain domain) {
    if (name >= api_slot_.size()) api_slot_.resize(std::max<size_t>(name + 1, strings_.size()), -1);
    int32_t& slot = api_slot_[name];
    if (slot < 0) {
      slot = static_cast<int32_t>(apis_.size());
      apis_.push_back({});
      apis_.back().name = name;
      apis_.back().domain = domain;
    }
    return apis_[slot];
  }

  static void CountError(ApiAgg& agg, int32_t code) {
    if (IsCudaFailure(code)) ++agg.failures;
    for (auto& [c, n] : agg.errors) {
      if (c == code) {
        ++n;
        return;
      }
    }
    agg.errors.push_back({code, 1});
  }

  static bool SameConfig(const KernelConfig& c, const KernelRecord& k) {
    return c.grid[0] == k.grid_x && c.grid[1] == k.grid_y && c.grid[2] == k.grid_z &&
           c.block[0] == k.block_x && c.block[1] == k.block_y && c.block[2] == k.block_z &&
           c.registers_per_thread == k.registers_per_thread &&
           c.static_shared_bytes == k.static_shared_bytes &&
           c.dynamic_shared_bytes == k.dynamic_shared_bytes;
  }

  static void CountConfig(KernelAgg& agg, const KernelRecord& k) {
    if (agg.last_config < agg.configs.size() &&
        SameConfig(agg.configs[agg.last_config].config, k)) {
      ++agg.configs[agg.last_config].config.calls;
      return;
    }
    for (size_t i = 0; i < agg.configs.size(); ++i) {
      if (SameConfig(agg.configs[i].config, k)) {
        ++agg.configs[i].config.calls;
        agg.last_config = i;
        return;
      }
    }
    ConfigAgg c;
    c.config.grid[0] = k.grid_x;
    c.config.grid[1] = k.grid_y;
    c.config.grid[2] = k.grid_z;
    c.config.block[0] = k.block_x;
    c.config.block[1] = k.block_y;
    c.config.block[2] = k.block_z;
    c.config.registers_per_thread = k.registers_per_thread;
    c.config.static_shared_bytes = k.static_shared_bytes;
    c.config.dynamic_shared_bytes = k.dynamic_shared_bytes;
    c.config.calls = 1;
    c.pid = k.pid;
    c.device = k.device_id;
    agg.last_config = agg.configs.size();
    agg.configs.push_back(c);
  }

  bool IsLaunchApi(StringId name) {
    if (name >= launch_api_.size())
      launch_api_.resize(std::max<size_t>(name + 1, strings_.size()), -1);
    int8_t& cached = launch_api_[name];
    if (cached < 0) {
      const std::string_view text = name < strings_.size() ? Str(name) : std::string_view();
      cached = text.find("Launch") != std::string_view::npos;
    }
    return cached;
  }

  std::vector<std::string> StackFrames(uint32_t pid, StackId id);
  void FinishKernels(ReportModel& model);
  void FinishApis(ReportModel& model);
  void FinishCopies(ReportModel& model);
  void FinishSync(ReportModel& model);
  void FinishMemory(ReportModel& model);
  void FinishUtilization(ReportModel& model);
  void FinishNvtx(ReportModel& model);
  void FinishOverheadAndLoss(ReportModel& model, const ReadReport& read_report);
  std::vector<CpuActivity> CpuDuring(ProcessState& p, uint64_t begin, uint64_t end);

  const ReportOptions& options_;
  const Prepass& prepass_;
  NameMatcher kernel_matcher_;
  NameMatcher api_matcher_;
  uint64_t time_begin_ = 0;
  uint64_t time_end_ = kNoTime;
  uint64_t origin_ = kNoTime;

  std::vector<std::string> strings_;
  std::vector<StackRecord> stacks_;
  SymbolTable symbols_;
  std::vector<DeviceRecord> devices_;
  std::vector<std::unique_ptr<ProcessState>> processes_;
  std::unordered_map<uint32_t, ProcessState*> process_by_pid_;
  ProcessState* last_process_ = nullptr;

  std::vector<int32_t> kernel_slot_;  // by StringId
  std::vector<KernelAgg> kernels_;
  std::vector<int32_t> api_slot_;
  std::vector<ApiAgg> apis_;
  std::vector<int8_t> launch_api_;
  std::array<CopyAgg, 16> memcpy_{};
  std::array<CopyAgg, 8> memset_{};
  std::array<DurationStats, 16> overhead_{};
  ReportSummary summary_;
};

std::vector<std::string> ReportBuilder::StackFrames(uint32_t pid, StackId id) {
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

void ReportBuilder::FinishKernels(ReportModel& model) {
  DemangleCache demangler;
  for (KernelAgg& agg : kernels_) {
    KernelRow row;
    row.name = Str(agg.name);
    row.demangled = demangler.Get(row.name);
    row.display_name = ShortName(row.demangled);
    row.time = agg.time;
    row.time.median_ns = agg.durations.TakeMedian();
    row.gpu_time_fraction =
        summary_.kernel_ns ? static_cast<double>(agg.time.total_ns) / summary_.kernel_ns : 0;
    for (ConfigAgg& c : agg.configs) {
      for (const DeviceRecord& d : devices_) {
        if (d.pid == c.pid && d.device_id == c.device) {
          const KernelConfig& k = c.config;
          c.config.occupancy =
              ComputeOccupancy(d, {k.block[0] * k.block[1] * k.block[2], k.registers_per_thread,
                                   k.static_shared_bytes + k.dynamic_shared_bytes});
          break;
        }
      }
      row.configs.push_back(c.config);
    }
    std::stable_sort(
        row.configs.begin(), row.configs.end(),
        [](const KernelConfig& a, const KernelConfig& b) { return a.calls > b.calls; });
    model.kernels.push_back(std::move(row));
  }
}

void ReportBuilder::FinishApis(ReportModel& model) {
  for (ApiAgg& agg : apis_) {
    ApiRow row;
    row.name = Str(agg.name);
    row.domain = agg.domain;
    row.time = agg.time;
    row.failures = agg.failures;
    summary_.api_failures += agg.failures;
    for (auto [code, count] : agg.errors) {
      row.errors.push_back({code, CudaErrorName(agg.domain, code), count});
    }
    std::stable_sort(row.errors.begin(), row.errors.end(),
                     [](const ApiError& a, const ApiError& b) {
                       return a.count != b.count ? a.count > b.count : a.code < b.code;
                     });
    (agg.domain == ApiDomain::kRuntime ? model.runtime_api : model.driver_api)
        .push_back(std::move(row));
  }
}

void ReportBuilder::FinishCopies(ReportModel& model) {
  for (size_t kind = 0; kind < memcpy_.size(); ++kind) {
    const CopyAgg& agg = memcpy_[kind];
    if (agg.time.count == 0) continue;
    model.memcpy.push_back(
        {static_cast<MemcpyKind>(kind), agg.time, agg.bytes, agg.min_bytes, agg.max_bytes});
  }
  for (size_t kind = 0; kind < memset_.size(); ++kind) {
    const CopyAgg& agg = memset_[kind];
    if (agg.time.count == 0) continue;
    model.memset.push_back({static_cast<MemoryKind>(kind), agg.time, agg.bytes});
  }
}

void ReportBuilder::FinishSync(ReportModel& model) {
  struct Group {
    SyncRow row;
    uint64_t longest = 0;
    uint32_t longest_correlation = 0;
  };
  for (auto& p : processes_) {
    std::vector<Group> groups;
    std::unordered_map<uint64_t, size_t> index;
    for (const SyncRecord& s : p->syncs) {
      const bool on_stream = s.stream_id != UINT32_MAX && s.kind != SyncKind::kContextSynchronize;
      const uint64_t key = (uint64_t{s.tid} << 32) ^
                           (uint64_t{static_cast<uint8_t>(s.kind)} << 28) ^
                           (on_stream ? s.stream_id : 0x0FFFFFFF);
      auto [it, inserted] = index.try_emplace(key, groups.size());
      if (inserted) {
        groups.push_back({});
        SyncRow& row = groups.back().row;
        row.pid = p->pid;
        row.tid = s.tid;
        row.kind = s.kind;
        if (on_stream) row.stream = s.stream_id;
      }
      Group& g = groups[it->second];
      const uint64_t ns = Duration(s.start_ns, s.end_ns);
      AddDuration(g.row.time, ns);
      if (g.row.time.count == 1 || ns > g.longest) {
        g.longest = ns;
        g.longest_correlation = s.correlation_id;
      }
    }
    for (Group& g : groups) {
      auto link = p->links.find(g.longest_correlation);
      if (link != p->links.end()) g.row.stack = StackFrames(p->pid, link->second.stack);
      model.sync.push_back(std::move(g.row));
    }
  }
  std::stable_sort(model.sync.begin(), model.sync.end(), [](const SyncRow& a, const SyncRow& b) {
    return a.time.total_ns > b.time.total_ns;
  });
}

void ReportBuilder::FinishMemory(ReportModel& model) {
  struct Live {
    uint64_t bytes;
    size_t record;
  };
  for (auto& p : processes_) {
    if (p->memory.empty()) continue;
    std::stable_sort(p->memory.begin(), p->memory.end(),
                     [](const MemoryRecord& a, const MemoryRecord& b) {
                       return a.timestamp_ns < b.timestamp_ns;
                     });
    std::vector<MemoryDeviceRow> rows;
    auto row_of = [&](uint32_t device) -> MemoryDeviceRow& {
      for (MemoryDeviceRow& r : rows) {
        if (r.device == device) return r;
      }
      rows.push_back({});
      rows.back().pid = p->pid;
      rows.back().device = device;
      return rows.back();
    };
    std::unordered_map<uint64_t, Live> live;  // by address
    for (size_t i = 0; i < p->memory.size(); ++i) {
      const MemoryRecord& m = p->memory[i];
      MemoryDeviceRow& row = row_of(m.device_id);
      if (m.op == MemoryOp::kAllocation) {
        ++row.allocations;
        row.bytes_allocated += m.bytes;
        row.live_bytes_at_exit += m.bytes;
        ++row.live_allocations_at_exit;
        live[m.address] = {m.bytes, i};
        if (row.live_bytes_at_exit > row.peak_bytes) {
          row.peak_bytes = row.live_bytes_at_exit;
          row.peak_at_ns = m.timestamp_ns;
        }
      } else if (m.op == MemoryOp::kRelease) {
        ++row.frees;
        auto it = live.find(m.address);
        if (it == live.end()) {
          ++row.unmatched_frees;
          continue;
        }
        MemoryDeviceRow& owner = row_of(p->memory[it->second.record].device_id);
        owner.bytes_freed += it->second.bytes;
        owner.live_bytes_at_exit -= it->second.bytes;
        --owner.live_allocations_at_exit;
        live.erase(it);
      }
    }
    for (MemoryDeviceRow& r : rows) {
      r.peak_at_ns = r.peak_at_ns >= origin_ ? r.peak_at_ns - origin_ : 0;
      model.memory.push_back(r);
    }
    for (const auto& [address, l] : live) {
      const MemoryRecord& m = p->memory[l.record];
      LeakRow leak;
      leak.pid = p->pid;
      leak.device = m.device_id;
      leak.address = address;
      leak.bytes = l.bytes;
      leak.memory_kind = m.memory_kind;
      leak.at_ns = m.timestamp_ns >= origin_ ? m.timestamp_ns - origin_ : 0;
      auto link = p->links.find(m.correlation_id);
      if (link != p->links.end()) {
        leak.api = Str(link->second.api);
        leak.stack = StackFrames(p->pid, link->second.stack);
      }
      model.leaks.push_back(std::move(leak));
    }
  }
  std::sort(model.memory.begin(), model.memory.end(),
            [](const MemoryDeviceRow& a, const MemoryDeviceRow& b) {
              return std::tie(a.pid, a.device) < std::tie(b.pid, b.device);
            });
  std::sort(model.leaks.begin(), model.leaks.end(), [](const LeakRow& a, const LeakRow& b) {
    return a.bytes != b.bytes ? a.bytes > b.bytes
                              : std::tie(a.pid, a.address) < std::tie(b.pid, b.address);
  });
  if (model.leaks.size() > options_.max_leaks) model.leaks.resize(options_.max_leaks);
}

std::vector<CpuActivity> ReportBuilder::CpuDuring(ProcessState& p, uint64_t begin, uint64_t end) {
  std::vector<CpuActivity> out;
  for (auto& thread : p.threads) {
    auto& calls = thread->calls;
    if (calls.empty()) continue;
    if (thread->max_end_prefix.size() != calls.size()) {
      thread->max_end_prefix.resize(calls.size());
      uint64_t m = 0;
      for (size_t i = 0; i < calls.size(); ++i)
        thread->max_end_prefix[i] = m = std::max(m, calls[i].end);
    }
    // Calls are sorted by start; walk back from the first one starting at or after
    // `end` while some earlier call may still reach into the gap.
    size_t i = std::lower_bound(calls.begin(), calls.end(), end,
                                [](const ApiCall& c, uint64_t v) { return c.start < v; }) -
               calls.begin();
    std::vector<std::pair<StringId, uint64_t>> by_name;
    while (i > 0 && thread->max_end_prefix[i - 1] > begin) {
      --i;
      const ApiCall& c = calls[i];
      if (c.end <= begin) continue;
      // A call nested in an enclosing call of the same thread (a driver call inside a
      // runtime call) is part of the enclosing one: count only the outer call.
      bool nested = false;
      for (size_t j = i; j-- > 0 && i - j <= 4;) {
        if (calls[j].start <= c.start && calls[j].end >= c.end) {
          nested = true;
          break;
        }
      }
      if (nested) continue;
      const uint64_t overlap = std::min(c.end, end) - std::max(c.start, begin);
      auto it = std::find_if(by_name.begin(), by_name.end(),
                             [&](const auto& e) { return e.first == c.name; });
      if (it == by_name.end()) {
        by_name.push_back({c.name, overlap});
      } else {
        it->second += overlap;
      }
    }
    for (auto [name, ns] : by_name) out.push_back({thread->tid, Str(name), ns});
  }
  std::sort(out.begin(), out.end(), [](const CpuActivity& a, const CpuActivity& b) {
    return a.overlap_ns != b.overlap_ns ? a.overlap_ns > b.overlap_ns
                                        : std::tie(a.tid, a.api) < std::tie(b.tid, b.api);
  });
  if (out.size() > 3) out.resize(3);
  return out;
}

void ReportBuilder::FinishUtilization(ReportModel& model) {
  for (auto& p : processes_) {
    for (auto& thread : p->threads) {
      auto by_start = [](const ApiCall& a, const ApiCall& b) { return a.start < b.start; };
      if (!std::is_sorted(thread->calls.begin(), thread->calls.end(), by_start)) {
        std::stable_sort(thread->calls.begin(), thread->calls.end(), by_start);
      }
    }
    if (p->first_ns == kNoTime) continue;
    std::sort(p->devices.begin(), p->devices.end(),
              [](const DeviceBusy& a, const DeviceBusy& b) { return a.device < b.device; });
    for (DeviceBusy& d : p->devices) {
      UtilizationRow row;
      row.pid = p->pid;
      row.device = d.device;
      row.span_ns = p->last_ns - p->first_ns;
      row.kernel_ns = d.kernel_ns;
      row.busy_ns = d.busy.covered_ns();
      std::vector<IdleGap> gaps;
      uint64_t cursor = p->first_ns;
      auto consider = [&](uint64_t begin, uint64_t end) {
        if (end <= begin || end - begin < options_.gap_threshold_ns) return;
        ++row.gaps;
        row.gap_ns += end - begin;
        gaps.push_back({begin, end - begin, {}});
      };
      for (const Interval& iv : d.busy.intervals()) {
        consider(cursor, iv.begin);
        cursor = std::max(cursor, iv.end);
      }
      consider(cursor, p->last_ns);
      std::stable_sort(gaps.begin(), gaps.end(), [](const IdleGap& a, const IdleGap& b) {
        return a.duration_ns > b.duration_ns;
      });
      if (gaps.size() > options_.max_gaps) gaps.resize(options_.max_gaps);
      for (IdleGap& g : gaps) {
        g.cpu = CpuDuring(*p, g.at_ns, g.at_ns + g.duration_ns);
        g.at_ns -= origin_;
      }
      row.longest_gaps = std::move(gaps);
      model.utilization.push_back(std::move(row));
    }
  }
  std::sort(model.utilization.begin(), model.utilization.end(),
            [](const UtilizationRow& a, const UtilizationRow& b) {
              return std::tie(a.pid, a.device) < std::tie(b.pid, b.device);
            });
}

void ReportBuilder::FinishNvtx(ReportModel& model) {
  NameMatcher nvtx_matcher(options_.nvtx_regex);
  std::unordered_map<uint64_t, size_t> index;  // (domain, name) -> row
  for (auto& p : processes_) {
    // Each range's row, in the order of p->nvtx.
    std::vector<size_t> row_of(p->nvtx.size());
    for (size_t i = 0; i < p->nvtx.size(); ++i) {
      const NvtxRecord& n = p->nvtx[i];
      const uint64_t key = (uint64_t{n.domain} << 32) | n.name;
      auto [it, inserted] = index.try_emplace(key, model.nvtx.size());
      if (inserted) {
        model.nvtx.push_back({});
        model.nvtx.back().name = Str(n.name);
        model.nvtx.back().domain = Str(n.domain);
      }
      row_of[i] = it->second;
      NvtxRow& row = model.nvtx[it->second];
      if (n.end_ns == 0) {
        ++row.unterminated;
      } else {
        AddDuration(row.time, Duration(n.start_ns, n.end_ns));
      }
    }
    // GPU time of kernels launched inside each range: sweep each thread's calls (sorted
    // by start) against its ranges (sorted by start), keeping the ranges still open.
    std::unordered_map<uint32_t, std::vector<size_t>> ranges_by_tid;
    for (size_t i = 0; i < p->nvtx.size(); ++i) ranges_by_tid[p->nvtx[i].tid].push_back(i);
    for (auto& [tid, ranges] : ranges_by_tid) {
      auto thread = p->thread_by_tid.find(tid);
      if (thread == p->thread_by_tid.end()) continue;
      std::sort(ranges.begin(), ranges.end(),
                [&](size_t a, size_t b) { return p->nvtx[a].start_ns < p->nvtx[b].start_ns; });
      std::vector<size_t> open;
      std::vector<size_t> rows_hit;
      size_t next = 0;
      for (const ApiCall& call : thread->second->calls) {
        const GpuWork* work = p->gpu_by_correlation.Find(call.correlation_id);
        if (work == nullptr || work->kernels() == 0) continue;
        while (next < ranges.size() && p->nvtx[ranges[next]].start_ns <= call.start) {
          open.push_back(ranges[next++]);
        }
        std::erase_if(open, [&](size_t r) {
          const uint64_t end = p->nvtx[r].end_ns;
          return end != 0 && end < call.start;
        });
        rows_hit.clear();
        for (size_t r : open) rows_hit.push_back(row_of[r]);
        std::sort(rows_hit.begin(), rows_hit.end());
        rows_hit.erase(std::unique(rows_hit.begin(), rows_hit.end()), rows_hit.end());
        for (size_t row : rows_hit) {
          model.nvtx[row].gpu_time_ns += work->ns();
          model.nvtx[row].kernels += work->kernels();
        }
      }
    }
  }
  if (nvtx_matcher.active()) {
    std::erase_if(model.nvtx, [&](const NvtxRow& row) {
      return !std::regex_search(row.name, std::regex(options_.nvtx_regex));
    });
  }
}

void ReportBuilder::FinishOverheadAndLoss(ReportModel& model, const ReadReport& read_report) {
  OverheadSummary& o = model.overhead;
  for (size_t kind = 0; kind < overhead_.size(); ++kind) {
    if (overhead_[kind].count == 0) continue;
    o.cupti.push_back({static_cast<OverheadKind>(kind), overhead_[kind]});
    o.cupti_ns += overhead_[kind].total_ns;
  }
  for (auto& p : processes_) {
    auto stat = [&](StatId id) { return p->stats[static_cast<uint32_t>(id)]; };
    o.callbacks += stat(StatId::callbacks);
    o.callback_ns += stat(StatId::callback_ns);
    o.unwind_ns += stat(StatId::unwind_ns);
    o.unique_stacks += stat(StatId::unique_stacks);
    o.fp_stacks_verified += stat(StatId::fp_stacks_verified);
    o.fp_stacks_rejected += stat(StatId::fp_stacks_rejected);
    o.translate_ns += stat(StatId::translate_ns);
    o.compress_ns += stat(StatId::compress_ns);
    o.memory_peak_bytes = std::max(o.memory_peak_bytes, stat(StatId::memory_peak_bytes));
    o.memory_budget_grown += stat(StatId::memory_budget_grown);
    for (uint32_t id = 0; id <= kMaxStatId; ++id) {
      const uint64_t value = p->stats[id];
      if (value == 0) continue;
      const StatInfo info = GetStatInfo(id);
      if (info.severity == StatSeverity::kInfo) continue;
      model.loss.push_back({p->pid, std::string(info.name),
                            info.severity == StatSeverity::kDataLoss ? "data_loss" : "warning",
                            value, std::string(info.description)});
    }
    if (p->process && p->process->end_ns == 0) {
      model.loss.push_back({p->pid, "process_incomplete", "data_loss", 1,
                            "the process ended before its final flush: records of its last "
                            "moments are missing"});
    }
  }
  auto reader_loss = [&](const char* stat, const char* severity, uint64_t value,
                         const char* description) {
    if (value > 0) model.loss.push_back({std::nullopt, stat, severity, value, description});
  };
  // The reader's loss (skipped files, files with nothing recoverable, damaged and torn
  // chunks) is the one every output shows (analyze/data_loss.h).
  for (const DataLossRow& row : SummarizeDataLoss(read_report).rows) {
    model.loss.push_back({std::nullopt, row.stat, "data_loss", row.value, row.description});
  }
  reader_loss("chunks_unknown", "warning", read_report.chunks_unknown,
              "chunks of a newer gpuperf's record types that were skipped");
  model.read_warnings = read_report.warnings;
}

ReportModel ReportBuilder::Finish(const ReadReport& read_report) {
  ReportModel model;
  if (origin_ == kNoTime) origin_ = 0;
  std::sort(processes_.begin(), processes_.end(),
            [](const auto& a, const auto& b) { return a->pid < b->pid; });
  uint64_t last = origin_;
  for (auto& p : processes_) {
    last = std::max(last, p->last_ns);
    ProcessRow row;
    row.pid = p->pid;
    if (p->process) {
      const ProcessRecord& r = *p->process;
      row.command = Str(r.command);
      row.hostname = Str(r.hostname);
      row.start_ns = r.start_ns >= origin_ ? r.start_ns - origin_ : 0;
      row.complete = r.end_ns != 0;
      const uint64_t end = r.end_ns ? r.end_ns : p->last_ns;
      row.wall_ns = Duration(r.start_ns ? r.start_ns : p->first_ns, end);
      last = std::max(last, r.end_ns);
    } else if (p->first_ns != kNoTime) {
      row.start_ns = p->first_ns - origin_;
      row.wall_ns = Duration(p->first_ns, p->last_ns);
    }
    model.overhead.wall_ns += row.wall_ns;
    model.processes.push_back(std::move(row));
  }
  for (const DeviceRecord& d : devices_) {
    model.devices.push_back(
        {d.pid, d.device_id, Str(d.name), d.compute_major, d.compute_minor, d.sm_count});
  }
  std::sort(model.devices.begin(), model.devices.end(), [](const DeviceRow& a, const DeviceRow& b) {
    return std::tie(a.pid, a.device) < std::tie(b.pid, b.device);
  });
  FinishKernels(model);
  FinishApis(model);
  FinishCopies(model);
  FinishSync(model);
  FinishMemory(model);
  FinishUtilization(model);
  FinishNvtx(model);
  FinishOverheadAndLoss(model, read_report);
  summary_.origin_ns = origin_;
  summary_.span_ns = last - origin_;
  model.summary = summary_;
  model.gap_threshold_ns = options_.gap_threshold_ns;
  SortAndTrim(model, ReportSort::kTotal, 0);
  return model;
}

template <class Feed>
Result<ReportModel> Build(const ReportOptions& options, Feed feed) {
  try {
    Prepass prepass;
    if (options.begin_ns || options.end_ns || !options.nvtx_regex.empty()) {
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

template <class Row, class Key>
void SortRows(std::vector<Row>& rows, ReportSort sort, Key name_of) {
  auto stats = [](const Row& r) -> const DurationStats& { return r.time; };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    const DurationStats& x = stats(a);
    const DurationStats& y = stats(b);
    switch (sort) {
      case ReportSort::kCalls:
        if (x.count != y.count) return x.count > y.count;
        break;
      case ReportSort::kAvg:
        if (x.avg_ns() != y.avg_ns()) return x.avg_ns() > y.avg_ns();
        break;
      case ReportSort::kMedian:
        if (x.median_ns != y.median_ns) return x.median_ns > y.median_ns;
        break;
      case ReportSort::kMax:
        if (x.max_ns != y.max_ns) return x.max_ns > y.max_ns;
        break;
      case ReportSort::kName:
        return name_of(a) < name_of(b);
      case ReportSort::kTotal:
        break;
    }
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    return name_of(a) < name_of(b);
  });
}

template <class Row>
void Trim(std::vector<Row>& rows, uint32_t top) {
  if (top > 0 && rows.size() > top) rows.resize(top);
}

}  // namespace

void SortAndTrim(ReportModel& model, ReportSort sort, uint32_t top) {
  SortRows(model.kernels, sort, [](const KernelRow& r) -> const std::string& { return r.name; });
  SortRows(model.runtime_api, sort, [](const ApiRow& r) -> const std::string& { return r.name; });
  SortRows(model.driver_api, sort, [](const ApiRow& r) -> const std::string& { return r.name; });
  SortRows(model.nvtx, sort, [](const NvtxRow& r) -> const std::string& { return r.name; });
  Trim(model.kernels, top);
  Trim(model.runtime_api, top);
  Trim(model.driver_api, top);
  Trim(model.nvtx, top);
  Trim(model.sync, top);
  Trim(model.leaks, top);
  for (UtilizationRow& u : model.utilization) Trim(u.longest_gaps, top);
}

Result<ReportModel> BuildReport(const std::string& path, const ReportOptions& options) {
  return Build(options, [&](RecordSink& sink, ReadReport& report) {
    return ReadTrace(path, sink, &report);
  });
}

Result<ReportModel> BuildReport(const Trace& trace, const ReportOptions& options) {
  return Build(options, [&](RecordSink& sink, ReadReport& report) {
    ReplayTrace(trace, sink);
    report = trace.read_report;
    return Status::Ok();
  });
}

}  // namespace gpuperf
