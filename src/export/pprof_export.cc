#include "export/pprof_export.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyze/symbols/symbol_table.h"
#include "base/demangle.h"
#include "export/pprof_profile.h"
#include "format/enum_names.h"

namespace gpuperf {
namespace {

using Line = PprofProfileBuilder::Line;
using Label = PprofProfileBuilder::Label;

class ProfileWriter {
 public:
  ProfileWriter(const StackNames& names, const PprofOptions& options)
      : names_(names), symbols_(names.strings, options.display) {
    symbols_.AddAll(names.modules, names.symbols, names.python_codes, names.threads);
    profile_.AddSampleType("gpu_time", "nanoseconds");
    profile_.AddSampleType("launches", "count");
    profile_.AddSampleType("cpu_launch_time", "nanoseconds");
    profile_.SetDefaultSampleType("gpu_time");
    profile_.SetPeriod("gpu_time", "nanoseconds", 1);
    // One mapping per loaded object, in the trace's order (the executable comes first,
    // which is what pprof takes as the main binary).
    for (const ModuleRecord& m : names.modules) {
      const uint64_t id = profile_.AddMapping(m.start, m.end, 0, Str(m.path), Str(m.build_id));
      modules_[m.pid].push_back({m.start, m.end, id});
    }
    for (auto& [pid, ranges] : modules_) {
      std::sort(ranges.begin(), ranges.end(),
                [](const ModuleRange& a, const ModuleRange& b) { return a.start < b.start; });
    }
  }

  void Add(const LaunchCost& cost) {
    const LaunchSite& site = cost.site;
    stack_.clear();  // root first
    switch (site.join) {
      case LaunchJoin::kJoined: {
        const std::vector<uint64_t>& cpu = CpuLocations(site.stack, site.pid, site.tid);
        stack_.insert(stack_.end(), cpu.begin(), cpu.end());
        break;
      }
      case LaunchJoin::kNoLink:
        stack_.push_back(Named("[unknown launch]"));
        break;
      case LaunchJoin::kNoStack:
        stack_.push_back(Named("[stack unavailable]"));
        break;
      case LaunchJoin::kStackLost:
        stack_.push_back(Named("[stack missing from trace]"));
        break;
    }
    if (site.join != LaunchJoin::kNoLink) stack_.push_back(ApiLocation(site.api));
    if (site.graph_id != 0) stack_.push_back(GraphLocation(site.graph_id));
    stack_.push_back(GpuLocation(site));
    std::reverse(stack_.begin(), stack_.end());  // pprof lists the leaf first

    labels_.clear();
    labels_.push_back(NumberLabel("pid", site.pid));
    if (site.tid != 0) labels_.push_back(NumberLabel("tid", site.tid));
    labels_.push_back(NumberLabel("device", site.device));
    labels_.push_back(NumberLabel("stream", site.stream));
    const int64_t values[] = {static_cast<int64_t>(cost.gpu_ns),
                              static_cast<int64_t>(cost.activities),
                              static_cast<int64_t>(cost.cpu_launch_ns)};
    profile_.AddSample(stack_, values, labels_);
  }

  PprofProfileBuilder& profile() { return profile_; }

 private:
  struct ModuleRange {
    uint64_t start, end, mapping_id;
  };

  std::string_view Str(StringId id) const {
    return id < names_.strings.size() ? std::string_view(names_.strings[id]) : std::string_view();
  }

  uint64_t MappingOf(uint32_t pid, uint64_t pc) const {
    auto it = modules_.find(pid);
    if (it == modules_.end()) return 0;
    const auto& ranges = it->second;
    auto after = std::upper_bound(ranges.begin(), ranges.end(), pc,
                                  [](uint64_t v, const ModuleRange& r) { return v < r.start; });
    if (after == ranges.begin()) return 0;
    --after;
    return pc < after->end ? after->mapping_id : 0;
  }

  // A frame gpuperf names: a location without mapping or address.
  uint64_t Named(std::string_view name, std::string_view system_name = {}) {
    const Line line{profile_.Function(name, system_name.empty() ? name : system_name, ""), 0};
    return profile_.Location(0, 0, {&line, 1});
  }

  // The frames below are the same for many sites: each is named once.
  uint64_t ApiLocation(StringId api) {
    auto [it, inserted] = api_locations_.try_emplace(api);
    if (inserted) {
      const std::string_view name = Str(api);
      it->second = Named(name.empty() ? "[unknown API]" : name);
    }
    return it->second;
  }
  uint64_t GraphLocation(uint32_t graph_id) {
    auto [it, inserted] = graph_locations_.try_emplace(graph_id);
    if (inserted) it->second = Named("[graph " + std::to_string(graph_id) + "]");
    return it->second;
  }
  uint64_t GpuLocation(const LaunchSite& site) {
    const uint64_t key = uint64_t{static_cast<uint8_t>(site.kind)} << 32 | site.name;
    auto [it, inserted] = gpu_locations_.try_emplace(key);
    if (inserted) it->second = NameGpuWork(site);
    return it->second;
  }
  uint64_t NameGpuWork(const LaunchSite& site) {
    switch (site.kind) {
      case GpuActivityKind::kKernel: {
        const std::string_view mangled = Str(site.name);
        if (mangled.empty()) return Named("[gpu] [unnamed kernel]");
        return Named("[gpu] " + ShortName(demangle_.Get(mangled)), mangled);
      }
      case GpuActivityKind::kMemcpy:
        return Named("[gpu] memcpy " + std::string(EnumName(static_cast<MemcpyKind>(site.name))));
      case GpuActivityKind::kMemset:
        return Named("[gpu] memset");
    }
    return Named("[gpu]");
  }

  // The CPU part of a stack, root first: each native PC one location holding the
  // functions inlined at it; each Python frame and label a location of its own.
  const std::vector<uint64_t>& CpuLocations(StackId stack_id, uint32_t pid, uint32_t tid) {
    const uint64_t key = uint64_t{stack_id} << 32 | tid;
    auto [it, inserted] = cpu_locations_.try_emplace(key);
    std::vector<uint64_t>& out = it->second;
    if (!inserted || stack_id >= names_.stacks.size()) return out;
    frames_.clear();
    symbols_.ResolveStack(names_.stacks[stack_id], frames_, tid);  // outermost first
    for (size_t i = 0; i < frames_.size();) {
      const Frame& first = frames_[i];
      if (first.kind != FrameKind::kNative) {
        const Line line{profile_.Function(first.function, first.function, first.file), first.line};
        out.push_back(profile_.Location(0, 0, {&line, 1}));
        ++i;
        continue;
      }
      // The PC's function, then what was inlined into it: pprof wants them innermost first.
      size_t end = i + 1;
      while (end < frames_.size() && frames_[end].kind == FrameKind::kNative &&
             frames_[end].inlined && frames_[end].pc == first.pc) {
        ++end;
      }
      lines_.clear();
      for (size_t j = end; j-- > i;) {
        const Frame& f = frames_[j];
        lines_.push_back({profile_.Function(f.function, f.function, f.file), f.line});
      }
      out.push_back(profile_.Location(MappingOf(pid, first.pc), first.pc, lines_));
      i = end;
    }
    return out;
  }

  Label NumberLabel(std::string_view key, uint64_t value) {
    // String values: the label kind every reader (pprof, Pyroscope, Parca) indexes.
    const int64_t key_index = profile_.Str(key);  // first: the string table's order
    auto [it, inserted] = number_strings_.try_emplace(value);
    if (inserted) it->second = profile_.Str(std::to_string(value));
    return {key_index, it->second};
  }

  const StackNames& names_;
  SymbolTable symbols_;
  PprofProfileBuilder profile_;
  DemangleCache demangle_;
  std::map<uint32_t, std::vector<ModuleRange>> modules_;
  std::map<uint64_t, std::vector<uint64_t>> cpu_locations_;  // (stack << 32 | tid)
  std::unordered_map<StringId, uint64_t> api_locations_;
  std::unordered_map<uint32_t, uint64_t> graph_locations_;
  std::unordered_map<uint64_t, uint64_t> gpu_locations_;  // (kind << 32 | name)
  std::unordered_map<uint64_t, int64_t> number_strings_;  // value -> string table index
  std::vector<Frame> frames_;
  std::vector<Line> lines_;
  std::vector<uint64_t> stack_;
  std::vector<Label> labels_;
};

}  // namespace

Status WritePprof(const LaunchProfile& model, const PprofOptions& options, std::ostream& out,
                  PprofStats* stats) {
  ProfileWriter writer(model.names, options);
  uint64_t activities = 0;
  for (const LaunchCost& cost : model.costs) {
    writer.Add(cost);
    activities += cost.activities;
  }
  PprofProfileBuilder& profile = writer.profile();

  if (model.first_ns && model.last_ns) {
    // Wall-clock time of the start, from the first pair of clock readings.
    const int64_t start =
        static_cast<int64_t>(*model.first_ns) + model.realtime_offset_ns.value_or(0);
    profile.SetTime(model.realtime_offset_ns ? start : 0,
                    static_cast<int64_t>(*model.last_ns - *model.first_ns));
  }
  profile.AddComment(
      "gpuperf: GPU time under the CPU stacks that launched it; the kernel, copy or set is the "
      "leaf ([gpu] ...); concurrent GPU work adds up");
  const JoinCounts& joins = model.joins;
  if (joins.unmatched() != 0) {
    profile.AddComment(std::to_string(joins.unmatched()) + " of " + std::to_string(joins.total) +
                       " GPU activities have no launch stack ([unknown launch], "
                       "[stack unavailable], [stack missing from trace])");
  }
  if (model.loss.any()) profile.AddComment(model.loss.line);

  const std::string bytes = profile.Serialize();
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (stats) {
    stats->samples = profile.samples();
    stats->locations = profile.locations();
    stats->functions = profile.functions();
    stats->mappings = profile.mappings();
    stats->activities = activities;
  }
  if (!out) return Error(StatusCode::kIoError, "cannot write the profile");
  return Status::Ok();
}

}  // namespace gpuperf
