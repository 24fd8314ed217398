#include "analyze/timeline/timeline_builder.h"

#include <algorithm>
#include <tuple>

#include "analyze/join/data_loss.h"
#include "analyze/ranks/rank_scan.h"
#include "analyze/timeline/record_order.h"
#include "format/enum_names.h"

namespace gpuperf {
namespace {

// Arrow ids: unique per (process, correlation id, ordinal of the GPU activity), and
// below 2^53 so JSON readers that parse numbers as doubles keep them exact. The first
// arrow of the first process is the correlation id itself: Perfetto stores these ids as
// varints, so the common case costs three bytes, not eight.
uint64_t FlowId(uint32_t process_index, uint32_t correlation_id, uint32_t ordinal) {
  static_assert(kMaxFlowsPerLaunch < 16);
  return (static_cast<uint64_t>(process_index & 0x1ffff) << 36) |
         (static_cast<uint64_t>(ordinal) << 32) | correlation_id;
}

// A batch in the order the lanes need: by thread, in start order, the longer (enclosing)
// call first when two start together.
template <class Record>
void OrderByThread(std::span<const Record> records, std::vector<uint32_t>& order) {
  OrderByGroup(
      records, [](const Record& r) { return std::make_pair(r.pid, r.tid); },
      [](const Record& a, const Record& b) {
        return a.start_ns < b.start_ns || (a.start_ns == b.start_ns && a.end_ns > b.end_ns);
      },
      order);
}

// By stream, in start order.
template <class Record>
void OrderByStream(std::span<const Record> records, std::vector<uint32_t>& order) {
  OrderByGroup(
      records, [](const Record& r) { return std::make_tuple(r.pid, r.device_id, r.stream_id); },
      [](const Record& a, const Record& b) { return a.start_ns < b.start_ns; }, order);
}

// Each argument is made in place at the end of `args` (the builder's, reused slice to
// slice): no copy of a temporary, six to seven times a kernel.
TimelineArg& AddArg(std::vector<TimelineArg>& args, InternedText key, TimelineArg::Type type) {
  TimelineArg& arg = args.emplace_back();
  arg.key = key;
  arg.type = type;
  return arg;
}

void AddUintArg(std::vector<TimelineArg>& args, InternedText key, uint64_t value,
                TimelineArg::Role role = TimelineArg::Role::kPlain) {
  TimelineArg& arg = AddArg(args, key, TimelineArg::Type::kUint);
  arg.uint_value = value;
  arg.role = role;
}

void AddDoubleArg(std::vector<TimelineArg>& args, InternedText key, double value) {
  AddArg(args, key, TimelineArg::Type::kDouble).double_value = value;
}

void AddDim3Arg(std::vector<TimelineArg>& args, InternedText key, TimelineArg::Role role,
                uint32_t x, uint32_t y, uint32_t z) {
  TimelineArg& arg = AddArg(args, key, TimelineArg::Type::kDim3);
  arg.role = role;
  arg.dims[0] = x;
  arg.dims[1] = y;
  arg.dims[2] = z;
}

void AddTextArg(std::vector<TimelineArg>& args, InternedText key, InternedText value) {
  AddArg(args, key, TimelineArg::Type::kInternedString).string_value = value;
}

// GB/s (decimal, as NVIDIA reports bandwidth) of bytes moved in [start, end).
double Bandwidth(uint64_t bytes, uint64_t start_ns, uint64_t end_ns) {
  return end_ns > start_ns ? static_cast<double>(bytes) / static_cast<double>(end_ns - start_ns)
                           : 0.0;
}

}  // namespace

InternedText TimelineNames::Intern(std::string_view text) {
  auto it = keys_.find(text);
  // The stored text, not the caller's: that may be a temporary.
  if (it != keys_.end()) return {it->second, it->first};
  texts_.emplace_back(text);
  const NameKey key = static_cast<NameKey>(texts_.size());
  keys_.emplace(texts_.back(), key);
  return {key, texts_.back()};
}

InternedText TimelineNames::ForString(StringId id, const TimelineIndex& index) {
  if (by_string_id_.size() <= id) by_string_id_.resize(id + 1, 0);
  NameKey& key = by_string_id_[id];
  if (key == 0) key = Intern(Demangle(index.str(id))).key;
  return {key, texts_[key - 1]};
}

InternedText TimelineNames::SymbolFor(StringId id, const TimelineIndex& index) {
  constexpr NameKey kUnset = ~NameKey{0};
  if (symbol_by_string_id_.size() <= id) symbol_by_string_id_.resize(id + 1, kUnset);
  NameKey& key = symbol_by_string_id_[id];
  if (key == kUnset) {
    const std::string_view recorded = index.str(id);
    key = recorded == ForString(id, index).text ? 0 : Intern(recorded).key;
  }
  return key ? InternedText{key, texts_[key - 1]} : InternedText{};
}

TimelineBuilder::TimelineBuilder(TimelineIndex& index, const TimelineOptions& options,
                                 TimelineWriter& writer, const TimelineNotes& notes)
    : index_(index), options_(options), writer_(writer) {
  cat_runtime_ = names_.Intern("cuda_runtime");
  cat_driver_ = names_.Intern("cuda_driver");
  cat_api_ = names_.Intern("cuda_api");
  cat_kernel_ = names_.Intern("kernel");
  cat_memcpy_ = names_.Intern("memcpy");
  cat_memset_ = names_.Intern("memset");
  cat_nvtx_ = names_.Intern("nvtx");
  key_correlation_ = names_.Intern("correlation_id");
  key_return_code_ = names_.Intern("return_code");
  key_grid_ = names_.Intern("grid");
  key_block_ = names_.Intern("block");
  key_registers_ = names_.Intern("registers_per_thread");
  key_static_shared_ = names_.Intern("static_shared_bytes");
  key_dynamic_shared_ = names_.Intern("dynamic_shared_bytes");
  key_bytes_ = names_.Intern("bytes");
  key_bandwidth_ = names_.Intern("bandwidth_GBps");
  key_src_kind_ = names_.Intern("src_kind");
  key_dst_kind_ = names_.Intern("dst_kind");
  key_memory_kind_ = names_.Intern("memory_kind");
  key_graph_id_ = names_.Intern("graph_id");
  key_domain_ = names_.Intern("domain");
  writer_.Begin({index_.first_clock_monotonic_ns, index_.first_clock_realtime_ns}, notes);
  // Above every process (ranks start at 0).
  if (!notes.data_loss.empty()) {
    Note("data loss", notes.data_loss, index_.first_clock_monotonic_ns, -1);
  }
  if (!notes.window.empty()) Note("window", notes.window, index_.window.begin_ns, -2);
}

void TimelineBuilder::Note(std::string_view title, std::string_view text, uint64_t ns,
                           int32_t sort_rank) {
  const std::string name = "gpuperf: " + std::string(title);
  TimelineTrack note;
  note.kind = TrackKind::kNote;
  note.sort_rank = sort_rank;
  note.name = name;
  const uint32_t track = NewTrack(std::move(note));
  writer_.Instant(track, ns, names_.Intern(name + " \u2014 " + std::string(text)),
                  names_.Intern("gpuperf"));
}

uint32_t TimelineBuilder::NewTrack(TimelineTrack track) {
  track.id = next_track_++;
  writer_.DefineTrack(track);
  ++stats_.tracks;
  return track.id;
}

uint32_t TimelineBuilder::ProcessTrack(uint32_t pid) {
  auto it = process_tracks_.find(pid);
  if (it != process_tracks_.end()) return it->second;
  TimelineTrack track;
  track.kind = TrackKind::kProcess;
  track.pid = pid;
  track.sort_rank = static_cast<int32_t>(index_.ProcessOrder(pid) * 1000);
  const ScannedProcess& process = index_.processes[pid];
  std::string command(index_.str(process.command));
  if (command.size() > 120) command = command.substr(0, 117) + "...";
  track.name = command.empty() ? "process " + std::to_string(pid) : command;
  if (process.rank >= 0) track.name = RankTrackName(pid);
  const uint32_t id = NewTrack(std::move(track));
  process_tracks_.emplace(pid, id);
  return id;
}

std::string TimelineBuilder::ThreadName(uint32_t pid, uint32_t tid) const {
  auto it = index_.thread_names.find({pid, tid});
  if (it != index_.thread_names.end()) return std::string(index_.str(it->second));
  return "thread " + std::to_string(tid);
}

uint32_t TimelineBuilder::ThreadTrack(uint32_t pid, uint32_t tid) {
  auto it = thread_tracks_.find({pid, tid});
  if (it != thread_tracks_.end()) return it->second;
  TimelineTrack track;
  track.kind = TrackKind::kThread;
  track.parent_id = ProcessTrack(pid);
  track.pid = pid;
  track.tid = tid;
  track.sort_rank = static_cast<int32_t>(std::min(tid, 1u << 24) * 64);
  track.name = ThreadName(pid, tid);
  const uint32_t id = NewTrack(std::move(track));
  thread_tracks_.emplace(std::make_pair(pid, tid), id);
  return id;
}

std::string TimelineBuilder::ProcessScope(uint32_t pid) const {
  if (index_.pids.size() <= 1) return "";
  const int32_t rank = index_.processes[pid].rank;
  return rank >= 0 ? "rank " + std::to_string(rank) : "pid " + std::to_string(pid);
}

std::string TimelineBuilder::GpuName(uint32_t pid, uint32_t device) const {
  std::string name = "GPU " + std::to_string(device);
  auto it = index_.devices.find({pid, device});
  if (it != index_.devices.end() && it->second.name) {
    name += " (" + std::string(index_.str(it->second.name)) + ")";
  }
  const std::string scope = ProcessScope(pid);
  if (!scope.empty()) name += " " + scope;
  return name;
}

// "rank 1 (node3, GPU 1)": the rank, its host, and the GPUs it ran kernels on.
std::string TimelineBuilder::RankTrackName(uint32_t pid) const {
  ProcessIdentity identity;
  identity.pid = pid;
  const ScannedProcess& process = index_.processes.at(pid);
  identity.rank = process.rank;
  identity.hostname = std::string(index_.str(process.hostname));
  for (const auto& [key, device] : index_.devices) {
    if (key.first == pid && device.busy && !device.busy->busy_ns().empty()) {
      identity.devices.push_back(key.second);
    }
  }
  return identity.Label();
}

uint32_t TimelineBuilder::GpuTrack(uint32_t pid, uint32_t device) {
  auto it = gpu_tracks_.find({pid, device});
  if (it != gpu_tracks_.end()) return it->second;
  // A rank's process track is there even when it has no CPU tracks: it names the rank.
  if (index_.processes[pid].rank >= 0) ProcessTrack(pid);
  TimelineTrack track;
  track.kind = TrackKind::kGpu;
  track.pid = pid;
  track.device = device;
  track.sort_rank =
      static_cast<int32_t>(index_.ProcessOrder(pid) * 1000 + 1 + std::min(device, 998u));
  track.name = GpuName(pid, device);
  track.scope = ProcessScope(pid);
  const uint32_t id = NewTrack(std::move(track));
  gpu_tracks_.emplace(std::make_pair(pid, device), id);
  return id;
}

uint32_t TimelineBuilder::CounterTrack(uint32_t pid, uint32_t device, CounterUnit unit) {
  auto key = std::make_tuple(pid, device, unit);
  auto it = counter_tracks_.find(key);
  if (it != counter_tracks_.end()) return it->second;
  TimelineTrack track;
  track.kind = TrackKind::kCounter;
  track.parent_id = GpuTrack(pid, device);
  track.pid = pid;
  track.device = device;
  track.unit = unit;
  track.sort_rank = unit == CounterUnit::kPercent ? -2 : -1;
  track.name = "GPU " + std::to_string(device) +
               (unit == CounterUnit::kPercent ? " busy %" : " memory in use");
  track.scope = ProcessScope(pid);
  const uint32_t id = NewTrack(std::move(track));
  counter_tracks_.emplace(key, id);
  return id;
}

uint32_t TimelineBuilder::NewLaneTrack(const LaneGroupKey& key, uint32_t lane) {
  const bool on_thread = key.kind == LaneKind::kApi || key.kind == LaneKind::kNvtx;
  if (key.kind == LaneKind::kApi && lane == 0) return ThreadTrack(key.pid, key.a);
  TimelineTrack track;
  track.pid = key.pid;
  track.lane = lane;
  std::string base;
  if (on_thread) {
    track.kind = key.kind == LaneKind::kApi ? TrackKind::kThread : TrackKind::kNvtx;
    track.parent_id = ThreadTrack(key.pid, key.a);
    track.tid = key.a;
    const int32_t group = key.kind == LaneKind::kNvtx ? 32 : 0;
    track.sort_rank =
        static_cast<int32_t>(std::min(key.a, 1u << 24) * 64) + group + std::min<int32_t>(lane, 31);
    base = ThreadName(key.pid, key.a) + (key.kind == LaneKind::kNvtx ? " NVTX" : "");
  } else {
    track.kind = TrackKind::kGpuStream;
    track.parent_id = GpuTrack(key.pid, key.a);
    track.device = key.a;
    track.tid = key.b;
    const int32_t group = key.kind == LaneKind::kKernels  ? 0
                          : key.kind == LaneKind::kMemcpy ? 1
                                                          : 2;
    track.sort_rank = static_cast<int32_t>(std::min(key.b, 1u << 24) * 16) + group * 4 +
                      std::min<int32_t>(lane, 3);
    track.work = key.kind == LaneKind::kKernels  ? GpuWork::kKernels
                 : key.kind == LaneKind::kMemcpy ? GpuWork::kMemcpy
                                                 : GpuWork::kMemset;
    track.scope = ProcessScope(key.pid);
    base = "stream " + std::to_string(key.b) +
           (key.kind == LaneKind::kMemcpy   ? " memcpy"
            : key.kind == LaneKind::kMemset ? " memset"
                                            : "");
  }
  if (lane > 0) {
    base += " (lane " + std::to_string(lane + 1) + ")";
    ++stats_.extra_lanes;
  }
  track.name = std::move(base);
  return NewTrack(std::move(track));
}

uint32_t TimelineBuilder::PlaceSlice(const LaneGroupKey& key, uint64_t start_ns, uint64_t end_ns) {
  // A batch comes grouped by thread or stream: most slices go where the last one went.
  if (!last_lanes_ || !(key == last_lane_key_)) {
    last_lanes_ = &lanes_[key];  // std::map: the lanes stay where they are
    last_lane_key_ = key;
  }
  std::vector<Lane>& lanes = *last_lanes_;
  for (Lane& lane : lanes) {
    if (lane.last_end_ns <= start_ns) {
      lane.last_end_ns = end_ns;
      return lane.track;
    }
  }
  const uint32_t track = NewLaneTrack(key, static_cast<uint32_t>(lanes.size()));
  lanes.push_back({end_ns, track});
  return track;
}

CorrelationSlot* TimelineBuilder::Slot(uint32_t pid, uint32_t correlation_id) {
  if (correlation_id == 0) return nullptr;
  return index_.correlations.Find(pid, correlation_id);
}

uint64_t TimelineBuilder::FlowIn(uint32_t pid, uint32_t correlation_id) {
  CorrelationSlot* slot = Slot(pid, correlation_id);
  if (!slot || !slot->has_launch_api) return 0;
  const uint32_t ordinal = slot->gpu_seen;
  if (slot->gpu_seen < kMaxFlowsPerLaunch) slot->gpu_seen = slot->gpu_seen + 1;
  if (ordinal >= slot->gpu_total) return 0;
  return FlowId(index_.ProcessIndex(pid), correlation_id, ordinal);
}

const TimelineStack* TimelineBuilder::LaunchStack(StackId stack_id, uint32_t tid) {
  const uint64_t key = uint64_t{stack_id} << 32 | tid;
  auto cached = launch_stacks_.find(key);
  if (cached != launch_stacks_.end()) return cached->second;
  const TimelineStack* drawn = nullptr;
  auto it = index_.stacks.find(stack_id);
  if (it != index_.stacks.end()) {
    frames_.clear();
    index_.symbols->ResolveStack(it->second, frames_, tid);  // outermost first
    std::vector<TimelineFrame> shown_frames;
    std::string text;
    auto add = [&](const Frame& frame) {
      TimelineFrame drawn_frame;
      drawn_frame.text = names_.Intern(FrameWithLocation(frame));
      drawn_frame.function = names_.Intern(frame.function);
      if (!frame.file.empty()) drawn_frame.file = names_.Intern(FileBaseName(frame.file));
      drawn_frame.line = frame.line;
      shown_frames.push_back(drawn_frame);
      if (!text.empty()) text += '\n';
      text += drawn_frame.text.text;
    };
    // The innermost frames; then, when the user's Python code is further out than that,
    // its innermost frames too, after a "..." frame: they say which line launched.
    const size_t shown = std::min<size_t>(frames_.size(), options_.stack_frames);
    for (size_t i = 0; i < shown; ++i) add(frames_[frames_.size() - 1 - i]);
    uint32_t python = 0;
    for (size_t i = frames_.size() - shown; i-- > 0 && python < options_.stack_frames;) {
      if (frames_[i].kind != FrameKind::kPython) continue;
      if (python++ == 0) {
        const InternedText elided = names_.Intern("...");
        shown_frames.push_back({elided, elided, {}, 0});
        text += "\n...";
      }
      add(frames_[i]);
    }
    // Stacks of several threads or ids that show the same frames are drawn once.
    if (!text.empty()) {
      const NameKey label = names_.Intern(text).key;
      auto [stored, inserted] = stacks_by_label_.try_emplace(label, nullptr);
      if (inserted) {
        StoredStack& stack = stored_stacks_.emplace_back();
        stack.frames = std::move(shown_frames);
        stack.stack.key = label;
        stack.stack.frames = stack.frames;
        stored->second = &stack.stack;
      }
      drawn = stored->second;
    }
  }
  launch_stacks_.emplace(key, drawn);
  return drawn;
}

void TimelineBuilder::OnApi(std::span<const ApiRecord> records) {
  OrderByThread(records, order_);
  VisitInOrder(records, order_, [&](const ApiRecord& api) {
    if (!index_.window.Contains(api.start_ns)) return;
    const uint64_t end_ns = std::max(api.end_ns, api.start_ns);
    TimelineSlice slice;
    slice.track = PlaceSlice({LaneKind::kApi, api.pid, api.tid, 0}, api.start_ns, end_ns);
    slice.start_ns = api.start_ns;
    slice.end_ns = end_ns;
    slice.name = api.name ? names_.ForString(api.name, index_)
                          : names_.Intern("API " + std::to_string(api.callback_id));
    slice.category = api.domain == ApiDomain::kRuntime  ? cat_runtime_
                     : api.domain == ApiDomain::kDriver ? cat_driver_
                                                        : cat_api_;
    args_.clear();
    flows_.clear();
    AddUintArg(args_, key_correlation_, api.correlation_id);
    if (api.return_code != 0) {
      AddUintArg(args_, key_return_code_, static_cast<uint32_t>(api.return_code));
    }
    if (CorrelationSlot* slot = Slot(api.pid, api.correlation_id)) {
      if (slot->stack_id) slice.stack = LaunchStack(slot->stack_id, api.tid);
      const uint32_t process_index = index_.ProcessIndex(api.pid);
      for (uint32_t i = 0; i < slot->gpu_total; ++i) {
        flows_.push_back(FlowId(process_index, api.correlation_id, i));
      }
    }
    slice.args = args_;
    slice.flows_out = flows_;
    stats_.flows += flows_.size();
    writer_.Slice(slice);
    ++stats_.slices;
  });
}

void TimelineBuilder::EmitGpuSlice(const LaneGroupKey& key, uint64_t start_ns, uint64_t end_ns,
                                   InternedText name, InternedText category, uint64_t flow_in,
                                   InternedText symbol) {
  TimelineSlice slice;
  slice.symbol = symbol;
  end_ns = std::max(end_ns, start_ns);
  slice.track = PlaceSlice(key, start_ns, end_ns);
  slice.start_ns = start_ns;
  slice.end_ns = end_ns;
  slice.name = name;
  slice.category = category;
  slice.args = args_;
  slice.flow_in = flow_in;
  writer_.Slice(slice);
  ++stats_.slices;
}

void TimelineBuilder::OnKernel(std::span<const KernelRecord> records) {
  OrderByStream(records, order_);
  VisitInOrder(records, order_, [&](const KernelRecord& kernel) {
    if (!index_.window.Contains(kernel.start_ns)) return;
    args_.clear();
    AddDim3Arg(args_, key_grid_, TimelineArg::Role::kGrid, kernel.grid_x, kernel.grid_y,
               kernel.grid_z);
    AddDim3Arg(args_, key_block_, TimelineArg::Role::kBlock, kernel.block_x, kernel.block_y,
               kernel.block_z);
    // Registers and static shared memory belong to the compiled kernel, not the launch.
    AddUintArg(args_, key_registers_, kernel.registers_per_thread,
               TimelineArg::Role::kKernelProperty);
    // Zero shared memory is the common case and says nothing: leave it out.
    if (kernel.static_shared_bytes) {
      AddUintArg(args_, key_static_shared_, kernel.static_shared_bytes,
                 TimelineArg::Role::kKernelProperty);
    }
    if (kernel.dynamic_shared_bytes) {
      AddUintArg(args_, key_dynamic_shared_, kernel.dynamic_shared_bytes);
    }
    AddUintArg(args_, key_correlation_, kernel.correlation_id);
    if (kernel.graph_id) AddUintArg(args_, key_graph_id_, kernel.graph_id);
    EmitGpuSlice({LaneKind::kKernels, kernel.pid, kernel.device_id, kernel.stream_id},
                 kernel.start_ns, kernel.end_ns, names_.ForString(kernel.name, index_), cat_kernel_,
                 FlowIn(kernel.pid, kernel.correlation_id), names_.SymbolFor(kernel.name, index_));
  });
}

void TimelineBuilder::OnMemcpy(std::span<const MemcpyRecord> records) {
  OrderByStream(records, order_);
  VisitInOrder(records, order_, [&](const MemcpyRecord& copy) {
    if (!index_.window.Contains(copy.start_ns)) return;
    args_.clear();
    AddUintArg(args_, key_bytes_, copy.bytes);
    AddDoubleArg(args_, key_bandwidth_, Bandwidth(copy.bytes, copy.start_ns, copy.end_ns));
    AddTextArg(args_, key_src_kind_, names_.Intern(EnumName(copy.src_kind)));
    AddTextArg(args_, key_dst_kind_, names_.Intern(EnumName(copy.dst_kind)));
    AddUintArg(args_, key_correlation_, copy.correlation_id);
    if (copy.graph_id) AddUintArg(args_, key_graph_id_, copy.graph_id);
    InternedText name = names_.Intern("Memcpy " + std::string(EnumName(copy.kind)));
    EmitGpuSlice({LaneKind::kMemcpy, copy.pid, copy.device_id, copy.stream_id}, copy.start_ns,
                 copy.end_ns, name, cat_memcpy_, FlowIn(copy.pid, copy.correlation_id));
  });
}

void TimelineBuilder::OnMemset(std::span<const MemsetRecord> records) {
  OrderByStream(records, order_);
  VisitInOrder(records, order_, [&](const MemsetRecord& set) {
    if (!index_.window.Contains(set.start_ns)) return;
    args_.clear();
    AddUintArg(args_, key_bytes_, set.bytes);
    AddDoubleArg(args_, key_bandwidth_, Bandwidth(set.bytes, set.start_ns, set.end_ns));
    AddTextArg(args_, key_memory_kind_, names_.Intern(EnumName(set.memory_kind)));
    AddUintArg(args_, key_correlation_, set.correlation_id);
    if (set.graph_id) AddUintArg(args_, key_graph_id_, set.graph_id);
    EmitGpuSlice({LaneKind::kMemset, set.pid, set.device_id, set.stream_id}, set.start_ns,
                 set.end_ns, names_.Intern("Memset"), cat_memset_,
                 FlowIn(set.pid, set.correlation_id));
  });
}

void TimelineBuilder::OnNvtx(std::span<const NvtxRecord> records) {
  OrderByThread(records, order_);
  VisitInOrder(records, order_, [&](const NvtxRecord& nvtx) {
    if (!index_.window.Contains(nvtx.start_ns)) return;
    InternedText name = names_.ForString(nvtx.name, index_);
    if (nvtx.kind == NvtxKind::kMark) {
      // Marks go on the NVTX track's first lane; an instant never breaks nesting.
      auto& lanes = lanes_[{LaneKind::kNvtx, nvtx.pid, nvtx.tid, 0}];
      if (lanes.empty()) {
        lanes.push_back({0, NewLaneTrack({LaneKind::kNvtx, nvtx.pid, nvtx.tid, 0}, 0)});
      }
      writer_.Instant(lanes.front().track, nvtx.start_ns, name, cat_nvtx_);
      ++stats_.instants;
      return;
    }
    if (nvtx.end_ns == 0 || nvtx.end_ns < nvtx.start_ns) {
      ++stats_.unfinished_ranges;
      return;
    }
    args_.clear();
    if (nvtx.domain) AddTextArg(args_, key_domain_, names_.ForString(nvtx.domain, index_));
    TimelineSlice slice;
    slice.track = PlaceSlice({LaneKind::kNvtx, nvtx.pid, nvtx.tid, 0}, nvtx.start_ns, nvtx.end_ns);
    slice.start_ns = nvtx.start_ns;
    slice.end_ns = nvtx.end_ns;
    slice.name = name;
    slice.category = cat_nvtx_;
    slice.args = args_;
    writer_.Slice(slice);
    ++stats_.slices;
  });
}

void TimelineBuilder::OnMemory(std::span<const MemoryRecord> records) {
  std::vector<MemoryRecord> sorted(records.begin(), records.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const MemoryRecord& a, const MemoryRecord& b) {
    return a.timestamp_ns < b.timestamp_ns;
  });
  for (const MemoryRecord& memory : sorted) {
    // Host allocations (pageable, pinned) do not use GPU memory.
    if (memory.memory_kind == MemoryKind::kPageable || memory.memory_kind == MemoryKind::kPinned) {
      continue;
    }
    if (memory.op != MemoryOp::kAllocation && memory.op != MemoryOp::kRelease) continue;
    int64_t& in_use = memory_in_use_[{memory.pid, memory.device_id}];
    const int64_t bytes = static_cast<int64_t>(memory.bytes);
    in_use =
        memory.op == MemoryOp::kAllocation ? in_use + bytes : std::max<int64_t>(0, in_use - bytes);
    // Outside a window the amount still changes; only its values are not drawn.
    if (!index_.window.Contains(memory.timestamp_ns)) continue;
    writer_.Counter(CounterTrack(memory.pid, memory.device_id, CounterUnit::kBytes),
                    memory.timestamp_ns, static_cast<double>(in_use));
    ++stats_.counter_values;
  }
}

Status TimelineBuilder::Finish() {
  for (const auto& [key, device] : index_.devices) {
    const BusyHistogram& busy = *device.busy;
    if (busy.busy_ns().empty()) continue;
    const uint32_t track = CounterTrack(key.first, key.second, CounterUnit::kPercent);
    // One value per change: a steady GPU costs two values, not one per bucket.
    double last = -1;
    uint64_t drawn_end = 0;
    for (size_t i = 0; i < busy.busy_ns().size(); ++i) {
      const uint64_t at = busy.origin_ns() + i * busy.bucket_ns();
      if (!index_.window.Contains(at)) continue;
      drawn_end = at + busy.bucket_ns();
      const double percent =
          100.0 * static_cast<double>(busy.busy_ns()[i]) / static_cast<double>(busy.bucket_ns());
      if (percent == last) continue;
      writer_.Counter(track, at, percent);
      ++stats_.counter_values;
      last = percent;
    }
    if (last > 0) {
      writer_.Counter(track, drawn_end, 0);
      ++stats_.counter_values;
    }
  }
  return writer_.Finish();
}

Status BuildTimeline(const TimelineRead& read, const TimelineOptions& options,
                     TimelineWriter& writer, TimelineStats* stats, const ReadReport* read_report) {
  // A window needs the whole trace's times before pass one can count what it keeps.
  TimelineWindow window;
  if (options.window.any()) {
    WindowScan window_scan(options.window);
    GP_RETURN_IF_ERROR(read(window_scan, WindowScan::ChunkTypes()));
    GP_ASSIGN_OR_RETURN(window, window_scan.Resolve());
  }
  TimelineScan scan(options, window);
  GP_RETURN_IF_ERROR(read(scan, {}));
  std::unique_ptr<TimelineIndex> index = scan.TakeIndex();
  if (options.on_counted) options.on_counted(index->drawn);
  const DataLossSummary loss =
      SummarizeDataLoss(read_report ? *read_report : ReadReport{}, index->recording_loss.Rows());
  const std::string window_line =
      window.active ? DescribeWindow(window, index->left_out) : std::string();
  TimelineBuilder builder(*index, options, writer, {loss.line, window_line});
  // What the builder draws (records.h numbers): API calls, kernels, copies, sets, memory
  // and NVTX. Launch links, stacks and symbols were pass one's.
  static constexpr uint16_t kDrawn[] = {5, 6, 7, 8, 10, 11};
  GP_RETURN_IF_ERROR(read(builder, kDrawn));
  GP_RETURN_IF_ERROR(builder.Finish());
  if (stats) {
    *stats = builder.stats();
    stats->drawn = index->drawn;
    stats->left_out = index->left_out;
    stats->window = window_line;
  }
  return Status::Ok();
}

}  // namespace gpuperf
