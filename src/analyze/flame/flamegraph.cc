#include "analyze/flame/flamegraph.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <span>
#include <unordered_map>
#include <utility>

#include "analyze/energy/energy.h"
#include "analyze/flame/flamegraph_cpu.h"
#include "analyze/flame/flamegraph_names.h"
#include "analyze/join/cpu_time.h"
#include "analyze/join/launch_sink.h"
#include "analyze/ranks/rank_scan.h"
#include "analyze/symbols/symbol_table.h"
#include "base/flat_map.h"

namespace gpuperf {
namespace {

using flame::GraphResolver;
using flame::NameSources;

// Everything that decides where an activity lands in the graph. Activities with equal
// keys are added up while streaming, so resolving names happens once per key.
struct LaunchKey {
  uint32_t pid = 0;
  StackId stack = 0;
  StringId api = 0;
  uint32_t graph_id = 0;
  uint32_t name = 0;  // kernel name id, or MemcpyKind for copies
  uint32_t device = 0;
  uint32_t stream = 0;  // only when splitting by stream
  uint32_t tid = 0;     // only when splitting by thread
  GpuActivityKind kind = GpuActivityKind::kKernel;
  LaunchJoin join = LaunchJoin::kNoLink;

  bool operator==(const LaunchKey&) const = default;
};

struct LaunchKeyHash {
  size_t operator()(const LaunchKey& k) const {
    // Multiply-xorshift over the key's words: cheap, and good enough for linear probing.
    uint64_t h = (uint64_t{k.pid} << 32 | k.stack) * 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 32) ^ (uint64_t{k.api} << 32 | k.graph_id)) * 0xff51afd7ed558ccdull;
    h = (h ^ (h >> 29) ^ (uint64_t{k.name} << 32 | k.device)) * 0xc4ceb9fe1a85ec53ull;
    h = (h ^ (h >> 32) ^ (uint64_t{k.stream} << 32 | k.tid)) * 0x9E3779B97F4A7C15ull;
    h ^= static_cast<uint64_t>(k.kind) << 8 | static_cast<uint64_t>(k.join);
    return static_cast<size_t>(h ^ (h >> 31));
  }
};

struct Weight {
  uint64_t ns = 0;
  uint64_t count = 0;
  uint32_t tag = 0;   // dense id of the key, for energy attribution
  double joules = 0;  // FlameWeight::kEnergy
};

using LaunchMap = FlatMap<LaunchKey, Weight, LaunchKeyHash>;

class LaunchAggregator {
 public:
  explicit LaunchAggregator(const FlameGraphOptions& options) : options_(options) {}

  void Add(const GpuActivity& a) {
    if (!options_.KeepsThread(a.pid, a.launch_tid)) {
      ++filtered_out_;
      return;
    }
    LaunchKey key;
    key.pid = a.pid;
    key.stack = a.stack_id;
    key.api = a.launch_api;
    key.graph_id = a.graph_id;
    key.name = a.what();
    key.device = a.device_id;
    key.stream = options_.split == FlameSplit::kStream ? a.stream_id : 0;
    key.tid = a.launch_tid;  // a thread's stacks may get a root label (autograd)
    key.kind = a.kind;
    key.join = a.join;
    if (last_ == nullptr || !(key == last_key_)) {
      last_key_ = key;
      last_ = &launches_[key];
      if (last_->count == 0) last_->tag = tags_++;  // a new key
    }
    last_->ns += a.duration_ns();
    ++last_->count;
    if (options_.weight == FlameWeight::kEnergy && a.kind == GpuActivityKind::kKernel) {
      energy_spans_.push_back({a.pid, a.device_id, a.start_ns, a.end_ns, last_->tag});
    }
  }

  // FlameWeight::kEnergy: shares the readings' energy among the kernels added.
  EnergyAttribution AttributeEnergy(std::span<const PowerSampleRecord> samples) {
    EnergyAttribution energy = gpuperf::AttributeEnergy(samples, std::move(energy_spans_), tags_);
    launches_.ForEachMutable([&energy](const LaunchKey&, Weight& weight) {
      weight.joules = energy.joules_by_tag[weight.tag];
    });
    return energy;
  }

  const LaunchMap& launches() const { return launches_; }
  uint64_t filtered_out() const { return filtered_out_; }

 private:
  const FlameGraphOptions& options_;
  LaunchMap launches_;
  LaunchKey last_key_;
  Weight* last_ = nullptr;
  uint64_t filtered_out_ = 0;
  uint32_t tags_ = 0;
  std::vector<EnergySpan> energy_spans_;
};

// --weight energy needs the recording's power readings; the summary says how often.
Status AddEnergy(LaunchAggregator& aggregator, std::span<const PowerSampleRecord> samples,
                 FlameSummary& summary) {
  if (samples.empty()) {
    return Error(StatusCode::kInvalidArgument,
                 "this trace has no GPU power readings (recorded without NVML, or with "
                 "--power-hz 0): --weight energy needs them (docs/energy.md)");
  }
  const EnergyAttribution energy = aggregator.AttributeEnergy(samples);
  for (const EnergyDevice& d : energy.devices) {
    summary.power_rate_hz = std::max(summary.power_rate_hz, d.rate_hz);
  }
  return Status::Ok();
}

Result<std::optional<std::regex>> CompileKernelRegex(const std::string& pattern) {
  if (pattern.empty()) return std::optional<std::regex>();
  try {
    return std::optional<std::regex>(std::regex(pattern, std::regex::ECMAScript));
  } catch (const std::regex_error& e) {
    return Error(StatusCode::kInvalidArgument,
                 "bad kernel regex '" + pattern + "': " + std::string(e.what()));
  }
}

FlameGraph Resolve(const LaunchAggregator& aggregator, const std::vector<CpuTimeEntry>& cpu,
                   const NameSources& names, const FlameGraphOptions& options,
                   const std::optional<std::regex>& kernel_re,
                   const CorrelationStats& correlation) {
  FlameGraph graph;
  graph.inverted = options.inverted;
  FlameSummary& summary = graph.summary;
  summary.correlation = correlation;
  summary.filtered_out = aggregator.filtered_out();
  GraphResolver resolver(names, options, graph);

  // Sorted keys: frame ids are handed out in a deterministic order.
  std::vector<std::pair<LaunchKey, Weight>> launches;
  launches.reserve(aggregator.launches().size());
  aggregator.launches().ForEach([&launches](const LaunchKey& key, const Weight& weight) {
    launches.emplace_back(key, weight);
  });
  std::sort(launches.begin(), launches.end(), [](const auto& a, const auto& b) {
    const LaunchKey& x = a.first;
    const LaunchKey& y = b.first;
    return std::tie(x.pid, x.stack, x.api, x.graph_id, x.name, x.device, x.stream, x.tid, x.kind,
                    x.join) < std::tie(y.pid, y.stack, y.api, y.graph_id, y.name, y.device,
                                       y.stream, y.tid, y.kind, y.join);
  });

  // The kernel filter, decided once per GPU frame.
  std::unordered_map<uint32_t, bool> gpu_frame_kept;
  std::vector<std::pair<LaunchKey, Weight>> kept;
  std::vector<uint32_t> kept_gpu_frames;
  std::set<uint32_t> pids;
  std::set<uint32_t> devices;
  for (const auto& [key, weight] : launches) {
    std::string bare;
    const uint32_t gpu_frame = resolver.GpuFrame(key.kind, key.name, key.device, &bare);
    auto [it, inserted] = gpu_frame_kept.emplace(gpu_frame, true);
    if (inserted && kernel_re) it->second = std::regex_search(bare, *kernel_re);
    if (!it->second) {
      summary.filtered_out += weight.count;
      continue;
    }
    kept.emplace_back(key, weight);
    kept_gpu_frames.push_back(gpu_frame);
    pids.insert(key.pid);
    devices.insert(key.device);
    resolver.NoteDevice(key.pid, key.device);
  }
  for (const CpuTimeEntry& e : cpu) {
    if (!options.pid || e.pid == *options.pid) pids.insert(e.pid);
  }
  summary.processes = static_cast<uint32_t>(pids.size());
  summary.devices = static_cast<uint32_t>(devices.size());

  flame::PathIndex paths;
  std::vector<uint32_t> path;
  for (size_t i = 0; i < kept.size(); ++i) {
    const LaunchKey& key = kept[i].first;
    const Weight& weight = kept[i].second;
    path.clear();
    if (options.split == FlameSplit::kRank) {
      path.push_back(resolver.Intern(resolver.RankLabel(key.pid), FlameFrameKind::kContext));
    } else if (pids.size() > 1 || options.process_roots) {
      path.push_back(resolver.Intern(resolver.ProcessLabel(key.pid), FlameFrameKind::kContext));
    }
    switch (options.split) {
      case FlameSplit::kNone:
      case FlameSplit::kRank:
        break;
      case FlameSplit::kDevice:
        path.push_back(
            resolver.Intern("[GPU" + std::to_string(key.device) + "]", FlameFrameKind::kContext));
        break;
      case FlameSplit::kStream:
        path.push_back(resolver.Intern(
            "[GPU" + std::to_string(key.device) + " stream " + std::to_string(key.stream) + "]",
            FlameFrameKind::kContext));
        break;
      case FlameSplit::kThread:
        path.push_back(
            resolver.Intern(resolver.ThreadLabel(key.pid, key.tid, key.join != LaunchJoin::kNoLink),
                            FlameFrameKind::kContext));
        break;
    }
    switch (key.join) {
      case LaunchJoin::kJoined: {
        const std::vector<uint32_t>& cpu = resolver.CpuFrames(key.stack, key.tid);
        path.insert(path.end(), cpu.begin(), cpu.end());
        break;
      }
      case LaunchJoin::kNoLink:
        path.push_back(resolver.Intern("[unknown launch]", FlameFrameKind::kContext));
        break;
      case LaunchJoin::kNoStack:
        path.push_back(resolver.Intern("[stack unavailable]", FlameFrameKind::kContext));
        break;
      case LaunchJoin::kStackLost:
        path.push_back(resolver.Intern("[stack missing from trace]", FlameFrameKind::kContext));
        break;
    }
    if (key.join != LaunchJoin::kNoLink) {
      std::string_view api = names.Str(key.api);
      path.push_back(resolver.Intern(api.empty() ? "[unknown API]" : std::string(api),
                                     FlameFrameKind::kLaunchApi));
    }
    if (key.graph_id != 0) {
      path.push_back(
          resolver.Intern("[graph " + std::to_string(key.graph_id) + "]", FlameFrameKind::kGraph));
    }
    path.push_back(kept_gpu_frames[i]);
    if (options.inverted) std::reverse(path.begin(), path.end());

    FlameStack& stack = paths.At(path, graph);
    stack.gpu_ns += weight.ns;
    stack.count += weight.count;
    const auto energy_uj = static_cast<uint64_t>(std::llround(weight.joules * 1e6));
    stack.energy_uj += energy_uj;

    summary.gpu_ns += weight.ns;
    summary.energy_uj += energy_uj;
    switch (key.kind) {
      case GpuActivityKind::kKernel:
        summary.kernels += weight.count;
        break;
      case GpuActivityKind::kMemcpy:
        summary.memcpys += weight.count;
        break;
      case GpuActivityKind::kMemset:
        summary.memsets += weight.count;
        break;
    }
    if (key.join != LaunchJoin::kJoined) {
      summary.unmatched += weight.count;
      summary.unmatched_ns += weight.ns;
    }
  }

  flame::AddCpuTime(cpu, options, pids.size() > 1, resolver, paths, graph);

  const auto& frames = graph.frames;
  std::sort(graph.stacks.begin(), graph.stacks.end(),
            [&frames](const FlameStack& a, const FlameStack& b) {
              return std::lexicographical_compare(a.frames.begin(), a.frames.end(),
                                                  b.frames.begin(), b.frames.end(),
                                                  [&frames](uint32_t x, uint32_t y) {
                                                    if (frames[x].name != frames[y].name)
                                                      return frames[x].name < frames[y].name;
                                                    return frames[x].kind < frames[y].kind;
                                                  });
            });
  return graph;
}

// The launch sink (launch_sink.h), what CPU time needs (cpu_time.h), and what --split-by
// rank and --weight energy read.
class FlameSink final : public LaunchSink {
 public:
  explicit FlameSink(Correlator& correlator) : LaunchSink(correlator), cpu(strings) {}

  void OnApi(std::span<const ApiRecord> records) override { cpu.AddApis(records); }
  void OnSync(std::span<const SyncRecord> records) override { cpu.AddSyncs(records); }
  void OnCpuSample(std::span<const CpuSampleRecord> records) override { cpu.AddSamples(records); }
  void OnOffCpu(std::span<const OffCpuRecord> records) override { cpu.AddOffCpu(records); }
  void OnRank(std::span<const RankRecord> records) override {
    ranks.insert(ranks.end(), records.begin(), records.end());
  }
  void OnPowerSample(std::span<const PowerSampleRecord> records) override {
    power_samples.insert(power_samples.end(), records.begin(), records.end());
  }

  CpuTimeCollector cpu;  // reads `strings` as it grows
  std::vector<RankRecord> ranks;
  std::vector<PowerSampleRecord> power_samples;
};

}  // namespace

Result<FlameGraph> BuildFlameGraph(const Trace& trace, const FlameGraphOptions& options) {
  GP_ASSIGN_OR_RETURN(std::optional<std::regex> kernel_re,
                      CompileKernelRegex(options.kernel_regex));
  LaunchAggregator aggregator(options);
  Correlator correlator([&aggregator](const GpuActivity& a) { aggregator.Add(a); });
  CorrelateTrace(trace, correlator);
  FlameSummary energy_summary;
  if (options.weight == FlameWeight::kEnergy) {
    GP_RETURN_IF_ERROR(AddEnergy(aggregator, trace.power_samples, energy_summary));
  }

  CpuTimeCollector cpu(trace.strings);
  cpu.AddApis(trace.apis);
  cpu.AddSyncs(trace.syncs);
  cpu.AddSamples(trace.cpu_samples);
  cpu.AddOffCpu(trace.off_cpus);

  SymbolTable symbols(trace.strings, {.python_internals = options.python_internals,
                                      .native_detail = options.native_detail});
  symbols.AddAll(trace.modules, trace.symbols, trace.python_codes, trace.threads);
  NameSources names{trace.strings,   trace.stacks,  symbols,
                    trace.processes, trace.threads, trace.ranks};
  FlameGraph graph =
      Resolve(aggregator, cpu.Finish(), names, options, kernel_re, correlator.stats());
  graph.summary.power_rate_hz = energy_summary.power_rate_hz;
  RecordingLossCollector loss;
  loss.AddProcesses(trace.processes);
  loss.AddStats(trace.stats);
  graph.recording_loss = loss.Rows();
  return graph;
}

Result<FlameGraph> BuildFlameGraphFromFile(const std::string& path,
                                           const FlameGraphOptions& options, ReadReport* report) {
  // A bad regex is reported before minutes of reading, not after.
  GP_ASSIGN_OR_RETURN(std::optional<std::regex> kernel_re,
                      CompileKernelRegex(options.kernel_regex));
  LaunchAggregator aggregator(options);
  Correlator correlator([&aggregator](const GpuActivity& a) { aggregator.Add(a); });
  FlameSink sink(correlator);
  GP_RETURN_IF_ERROR(ReadTrace(path, sink, report));
  correlator.Finish();
  FlameSummary energy_summary;
  if (options.weight == FlameWeight::kEnergy) {
    GP_RETURN_IF_ERROR(AddEnergy(aggregator, sink.power_samples, energy_summary));
  }

  // Built after reading: the string table no longer moves.
  SymbolTable symbols(sink.strings, {.python_internals = options.python_internals,
                                     .native_detail = options.native_detail});
  symbols.AddAll(sink.modules, sink.symbols, sink.python_codes, sink.threads);
  NameSources names{sink.strings, sink.stacks, symbols, sink.processes, sink.threads, sink.ranks};
  FlameGraph graph =
      Resolve(aggregator, sink.cpu.Finish(), names, options, kernel_re, correlator.stats());
  graph.summary.power_rate_hz = energy_summary.power_rate_hz;
  graph.recording_loss = sink.loss.Rows();
  return graph;
}

}  // namespace gpuperf
