#include "analyze/dataset/part_builder.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "analyze/flame/flamegraph.h"
#include "analyze/flame/flamegraph_names.h"
#include "analyze/ranks/collectives.h"
#include "analyze/ranks/nccl_join.h"
#include "analyze/symbols/symbol_table.h"
#include "base/text_escape.h"
#include "format/enum_names.h"

namespace gpuperf {
namespace {

using T = DatasetTable;

int64_t DurationNs(uint64_t start, uint64_t end) {
  return end > start ? static_cast<int64_t>(end - start) : 0;
}

int64_t Signed(uint64_t v) {
  return static_cast<int64_t>(v);
}

const char* JoinName(LaunchJoin join) {
  switch (join) {
    case LaunchJoin::kJoined:
      return "joined";
    case LaunchJoin::kNoLink:
      return "no_link";
    case LaunchJoin::kNoStack:
      return "no_stack";
    case LaunchJoin::kStackLost:
      return "stack_lost";
  }
  return "?";
}

const char* FrameKindName(const Frame& frame) {
  switch (frame.kind) {
    case FrameKind::kNative:
      return IsKernelFrame(frame) ? "os_kernel" : "native";
    case FrameKind::kPython:
      return "python";
    case FrameKind::kLabel:
      return "label";
  }
  return "?";
}

// As the report's JSON writes a communicator (comm_hash), so the two join.
std::string CommunicatorHash(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// The columns kernels, copies and sets share after host, pid and rank.
template <class GpuRecord>
RowAppender& GpuColumns(RowAppender& row, const GpuRecord& r) {
  return row.Int(r.device_id)
      .Int(r.context_id)
      .Int(r.stream_id)
      .Int(r.correlation_id)
      .Int(Signed(r.start_ns))
      .Int(Signed(r.end_ns))
      .Int(DurationNs(r.start_ns, r.end_ns));
}

}  // namespace

std::span<const uint16_t> PartFirstPassChunks() {
  static constexpr uint16_t kTypes[] = {1, 13, 22, 31};  // records.h / format chunk numbers
  return kTypes;
}

PartRowBuilder::PartRowBuilder(Correlator& correlator, const RankScan& scan,
                               const ClockAlignment& clocks, DatasetSink& sink, DatasetPart part,
                               int64_t id_base, const StackDisplayOptions& display)
    : LaunchSink(correlator),
      display_(display),
      scan_(scan),
      clocks_(clocks),
      sink_(sink),
      part_(std::move(part)),
      id_base_(id_base) {
  for (DatasetTable table : AllDatasetTables()) {
    batches_[static_cast<size_t>(table)].Reset(DatasetTableSpec(table), pool_);
  }
}

void PartRowBuilder::BeginSecondPass() {
  second_pass_ = true;
  correlator_.NoMoreLinks();
}

// ---- strings and ids ----

void PartRowBuilder::OnString(StringId id, std::string_view text) {
  LaunchSink::OnString(id, text);
  if (id < pool_of_string_.size()) pool_of_string_[id] = 0;  // redefined: pooled anew
}

uint32_t PartRowBuilder::Text(StringId id) {
  if (id == 0 || id >= strings.size()) return 0;
  if (pool_of_string_.size() <= id) pool_of_string_.resize(strings.size(), 0);
  uint32_t& pooled = pool_of_string_[id];
  if (pooled == 0) pooled = pool_.Intern(Utf8Text(strings[id]));
  return pooled;
}

uint32_t PartRowBuilder::Literal(std::string_view s) {
  return pool_.Intern(Utf8Text(s));
}

uint32_t PartRowBuilder::Fixed(std::string_view name) {
  auto [it, inserted] = fixed_.try_emplace(name.data(), 0);
  if (inserted) it->second = Literal(name);
  return it->second;
}

const PartRowBuilder::KernelNames& PartRowBuilder::NamesOf(StringId kernel) {
  if (kernel >= kernel_names_.size()) kernel_names_.resize(kernel + 1);
  KernelNames& names = kernel_names_[kernel];
  if (!names.known) {
    const std::string_view recorded =
        kernel < strings.size() ? std::string_view(strings[kernel]) : std::string_view();
    const std::string& demangled = demangle_.Get(recorded);
    names.known = true;
    names.name = Text(kernel);
    names.demangled = Literal(demangled);
    names.short_name = Literal(recorded.empty() ? "[unnamed kernel]" : ShortName(demangled));
    names.communication = Literal(CommKernelName(recorded));
  }
  return names;
}

int64_t PartRowBuilder::StackIdOf(StackId stack, uint32_t tid) {
  // Most launches repeat a few stacks: a small cache in front of the ordered map (whose
  // order numbers the stacks table) saves a tree walk per row.
  const uint64_t key = (uint64_t{stack} << 32) | tid;
  RecentStack& recent = recent_stacks_[(key * 0x9E3779B97F4A7C15ull) >> 56];
  if (recent.local_id == 0 || recent.key != key) {
    auto [it, inserted] =
        stack_ids_.try_emplace({stack, tid}, static_cast<int64_t>(stack_ids_.size() + 1));
    recent = {key, it->second};
  }
  return id_base_ + recent.local_id;
}

// ---- rows ----

RowAppender PartRowBuilder::Row(DatasetTable table, uint32_t pid) {
  TableBatch& batch = batches_[static_cast<size_t>(table)];
  if (batch.rows >= kDatasetBatchRows && status_.ok()) status_ = Flush(table);
  if (batch.rows >= kDatasetBatchRows) batch.Clear();  // a failed write: keep memory bounded
  auto [it, inserted] = who_.try_emplace(pid);
  if (inserted) {
    if (const ProcessIdentity* p = scan_.Find(pid)) {
      it->second.host = Literal(p->hostname);
      it->second.rank = p->rank;
    }
  }
  if (part_.pid == 0) part_.pid = pid;
  ++rows_[static_cast<size_t>(table)];
  RowAppender row(batch);
  row.Str(it->second.host).Int(pid).Int(it->second.rank);
  return row;
}

Status PartRowBuilder::Flush(DatasetTable table) {
  TableBatch& batch = batches_[static_cast<size_t>(table)];
  if (batch.rows == 0) return Status::Ok();
  if (out_ == nullptr) {
    const ProcessIdentity* p = scan_.Find(part_.pid);
    part_.rank = p != nullptr ? p->rank : -1;
    GP_ASSIGN_OR_RETURN(out_, sink_.OpenPart(part_));
  }
  Status status = out_->Write(table, batch);
  batch.Clear();
  return status;
}

void PartRowBuilder::LaunchColumns(RowAppender& row, const GpuActivity& a) {
  const bool linked = a.join != LaunchJoin::kNoLink;
  uint32_t& join_name = join_names_[static_cast<size_t>(a.join)];
  if (join_name == 0) join_name = Literal(JoinName(a.join));
  row.Str(join_name)
      .IntOrNull(a.join == LaunchJoin::kJoined,
                 a.join == LaunchJoin::kJoined ? StackIdOf(a.stack_id, a.launch_tid) : 0)
      .StrOrNull(linked, linked ? Text(a.launch_api) : 0)
      .IntOrNull(linked, a.launch_tid)
      .IntOrNull(linked, Signed(a.launch_ns));
}

void PartRowBuilder::OnActivity(const GpuActivity& a) {
  switch (a.kind) {
    case GpuActivityKind::kKernel:
      KernelRow(a, kernel_batch_[a.record_index - kernels_before_]);
      break;
    case GpuActivityKind::kMemcpy:
      MemcpyRow(a, memcpy_batch_[a.record_index - memcpys_before_]);
      break;
    case GpuActivityKind::kMemset:
      MemsetRow(a, memset_batch_[a.record_index - memsets_before_]);
      break;
  }
}

void PartRowBuilder::KernelRow(const GpuActivity& a, const KernelRecord& k) {
  const KernelNames& names = NamesOf(k.name);
  if (names.communication != 0) {
    comm_kernels_.push_back({k.pid, k.device_id, k.stream_id, names.communication,
                             Literal(CollectiveKind(pool_[names.communication])), k.correlation_id,
                             k.start_ns, k.end_ns});
  }
  RowAppender row = Row(T::kKernels, k.pid);
  GpuColumns(row, k)
      .Str(names.name)
      .Str(names.demangled)
      .Str(names.short_name)
      .Int(k.grid_x)
      .Int(k.grid_y)
      .Int(k.grid_z)
      .Int(k.block_x)
      .Int(k.block_y)
      .Int(k.block_z)
      .Int(k.registers_per_thread)
      .Int(k.static_shared_bytes)
      .Int(k.dynamic_shared_bytes)
      .Int(k.graph_id)
      .Int(Signed(k.graph_node_id))
      .StrOrNull(names.communication != 0, names.communication);
  LaunchColumns(row, a);
}

void PartRowBuilder::MemcpyRow(const GpuActivity& a, const MemcpyRecord& m) {
  RowAppender row = Row(T::kMemcpys, m.pid);
  GpuColumns(row, m)
      .Str(Fixed(EnumName(m.kind)))
      .Str(Fixed(EnumName(m.src_kind)))
      .Str(Fixed(EnumName(m.dst_kind)))
      .Int(Signed(m.bytes))
      .Int(m.src_device_id)
      .Int(m.dst_device_id)
      .Int(m.graph_id);
  LaunchColumns(row, a);
}

void PartRowBuilder::MemsetRow(const GpuActivity& a, const MemsetRecord& m) {
  RowAppender row = Row(T::kMemsets, m.pid);
  GpuColumns(row, m)
      .Str(Fixed(EnumName(m.memory_kind)))
      .Int(Signed(m.bytes))
      .Int(m.value)
      .Int(m.graph_id);
  LaunchColumns(row, a);
}

// ---- the record kinds ----

void PartRowBuilder::OnStack(const StackRecord& stack) {
  if (!second_pass_) LaunchSink::OnStack(stack);
}

void PartRowBuilder::OnProcess(std::span<const ProcessRecord> records) {
  if (second_pass_) return;
  LaunchSink::OnProcess(records);
  if (part_.pid == 0 && !records.empty()) part_.pid = records.front().pid;
}

void PartRowBuilder::OnLaunchLink(std::span<const LaunchLinkRecord> records) {
  if (!second_pass_) LaunchSink::OnLaunchLink(records);
}

void PartRowBuilder::OnRank(std::span<const RankRecord> records) {
  if (!second_pass_) ranks_.insert(ranks_.end(), records.begin(), records.end());
}

void PartRowBuilder::OnDevice(std::span<const DeviceRecord> records) {
  devices_.insert(devices_.end(), records.begin(), records.end());
}

void PartRowBuilder::OnKernel(std::span<const KernelRecord> records) {
  kernel_batch_ = records;
  correlator_.AddKernels(records);
  kernels_before_ += records.size();
}

void PartRowBuilder::OnMemcpy(std::span<const MemcpyRecord> records) {
  memcpy_batch_ = records;
  correlator_.AddMemcpys(records);
  memcpys_before_ += records.size();
}

void PartRowBuilder::OnMemset(std::span<const MemsetRecord> records) {
  memset_batch_ = records;
  correlator_.AddMemsets(records);
  memsets_before_ += records.size();
}

void PartRowBuilder::OnApi(std::span<const ApiRecord> records) {
  for (const ApiRecord& r : records) {
    Row(T::kApiCalls, r.pid)
        .Int(r.tid)
        .Str(Fixed(EnumName(r.domain)))
        .Int(r.callback_id)
        .Str(Text(r.name))
        .Int(Signed(r.start_ns))
        .Int(Signed(r.end_ns))
        .Int(DurationNs(r.start_ns, r.end_ns))
        .Int(r.correlation_id)
        .Int(r.return_code);
  }
}

void PartRowBuilder::OnSync(std::span<const SyncRecord> records) {
  for (const SyncRecord& r : records) {
    Row(T::kSyncs, r.pid)
        .Int(r.tid)
        .Str(Fixed(EnumName(r.kind)))
        .Int(r.context_id)
        .IntOrNull(r.stream_id != UINT32_MAX, r.stream_id)
        .Int(r.event_id)
        .Int(Signed(r.start_ns))
        .Int(Signed(r.end_ns))
        .Int(DurationNs(r.start_ns, r.end_ns))
        .Int(r.correlation_id);
  }
}

void PartRowBuilder::OnMemory(std::span<const MemoryRecord> records) {
  for (const MemoryRecord& r : records) {
    Row(T::kAllocations, r.pid)
        .Str(Fixed(EnumName(r.op)))
        .Str(Fixed(EnumName(r.memory_kind)))
        .Int(Signed(r.address))
        .Int(Signed(r.bytes))
        .Int(r.device_id)
        .Int(r.context_id)
        .Int(r.stream_id)
        .Int(Signed(r.timestamp_ns))
        .Int(r.correlation_id)
        .Int(r.is_async);
  }
}

void PartRowBuilder::OnNvtx(std::span<const NvtxRecord> records) {
  for (const NvtxRecord& r : records) {
    const bool ended = r.end_ns != 0;
    Row(T::kNvtxRanges, r.pid)
        .Int(r.tid)
        .Str(Fixed(EnumName(r.kind)))
        .Str(Text(r.name))
        .Str(Text(r.domain))
        .Int(Signed(r.start_ns))
        .IntOrNull(ended, Signed(r.end_ns))
        .IntOrNull(ended, DurationNs(r.start_ns, r.end_ns))
        .Int(r.color);
  }
}

void PartRowBuilder::OnCpuSample(std::span<const CpuSampleRecord> records) {
  for (const CpuSampleRecord& r : records) {
    Row(T::kCpuSamples, r.pid)
        .Int(r.tid)
        .Int(Signed(r.timestamp_ns))
        .Int(r.cpu)
        .Int(Signed(r.weight_ns))
        .IntOrNull(r.stack_id != 0, r.stack_id != 0 ? StackIdOf(r.stack_id, r.tid) : 0);
  }
}

void PartRowBuilder::OnOffCpu(std::span<const OffCpuRecord> records) {
  for (const OffCpuRecord& r : records) {
    Row(T::kOffCpu, r.pid)
        .Int(r.tid)
        .Int(Signed(r.start_ns))
        .Int(Signed(r.end_ns))
        .Int(Signed(r.blocked_ns))
        .Int(r.count)
        .Str(Fixed(EnumName(r.reason)))
        .IntOrNull(r.stack_id != 0, r.stack_id != 0 ? StackIdOf(r.stack_id, r.tid) : 0);
  }
}

void PartRowBuilder::OnPowerSample(std::span<const PowerSampleRecord> records) {
  for (const PowerSampleRecord& r : records) {
    Row(T::kPower, r.pid)
        .Int(r.device_id)
        .Int(Signed(r.timestamp_ns))
        .Int(r.power_mw)
        .IntOrNull(r.energy_mj != 0, Signed(r.energy_mj))
        .Str(Fixed(EnumName(r.source)));
  }
}

void PartRowBuilder::OnNcclCollective(std::span<const NcclCollectiveRecord> records) {
  nccl_calls_.insert(nccl_calls_.end(), records.begin(), records.end());
}

void PartRowBuilder::OnNcclComm(std::span<const NcclCommRecord> records) {
  for (const NcclCommRecord& r : records) {
    int32_t& ranks = nccl_comm_ranks_[r.comm_hash];
    ranks = std::max(ranks, r.nranks);
  }
}

// ---- at the end of the file ----

void PartRowBuilder::WriteCollectives() {
  // Per process, as MatchCollectives reads them: in start order, each (device, stream)
  // numbered by first use, each kernel name counted on its stream.
  std::stable_sort(
      comm_kernels_.begin(), comm_kernels_.end(), [](const CommKernel& a, const CommKernel& b) {
        return std::tie(a.pid, a.start_ns, a.end_ns) < std::tie(b.pid, b.start_ns, b.end_ns);
      });
  for (size_t begin = 0; begin < comm_kernels_.size();) {
    const uint32_t pid = comm_kernels_[begin].pid;
    size_t end = begin;
    while (end < comm_kernels_.size() && comm_kernels_[end].pid == pid) ++end;
    // NCCL's profiler plugin: each call joins the NCCL kernel its thread launched last.
    std::vector<NcclLaunch> launches;
    std::vector<size_t> kernel_of_launch;
    for (size_t k = begin; k < end; ++k) {
      if (const LaunchLink* link = correlator_.FindLink(pid, comm_kernels_[k].correlation_id)) {
        launches.push_back({link->tid, link->launch_ns});
        kernel_of_launch.push_back(k);
      }
    }
    std::vector<const NcclCollectiveRecord*> calls;
    std::vector<NcclCall> joinable;
    for (const NcclCollectiveRecord& c : nccl_calls_) {
      if (c.pid != pid) continue;
      calls.push_back(&c);
      joinable.push_back({c.tid, c.start_ns});
    }
    const std::vector<size_t> joined = JoinNcclCalls(joinable, launches);
    std::map<size_t, std::vector<const NcclCollectiveRecord*>> calls_of_kernel;
    for (size_t i = 0; i < calls.size(); ++i) {
      if (joined[i] != kNotJoined) calls_of_kernel[kernel_of_launch[joined[i]]].push_back(calls[i]);
    }
    std::vector<std::pair<uint32_t, uint32_t>> streams;     // (device, stream) by first use
    std::map<std::pair<size_t, uint32_t>, int64_t> counts;  // (stream ordinal, name) -> seen
    for (size_t k = begin; k < end; ++k) {
      const CommKernel& c = comm_kernels_[k];
      const auto stream = std::make_pair(c.device, c.stream);
      const auto found = std::find(streams.begin(), streams.end(), stream);
      const size_t ordinal = found - streams.begin();
      if (found == streams.end()) streams.push_back(stream);
      const int64_t nth = counts[{ordinal, c.name}]++;
      const std::vector<const NcclCollectiveRecord*>& mine = calls_of_kernel[k];
      const NcclCollectiveRecord* primary = nullptr;  // the first call the kernel ran
      uint64_t bytes = 0;
      int32_t nranks = 0;
      for (const NcclCollectiveRecord* call : mine) {
        if (primary == nullptr || call->start_ns < primary->start_ns) primary = call;
        int32_t n = call->nranks;
        if (auto it = nccl_comm_ranks_.find(call->comm_hash); it != nccl_comm_ranks_.end()) {
          n = std::max(n, it->second);
        }
        nranks = std::max(nranks, n);
        bytes += NcclCollectiveBytes(strings[call->func], call->count, call->type_size, n);
      }
      const bool plugin = primary != nullptr;
      std::string algorithm;
      if (plugin) {
        algorithm = strings[primary->algorithm] + "/" + strings[primary->protocol];
      }
      Row(T::kCollectives, pid)
          .Int(c.device)
          .Int(c.stream)
          .Int(static_cast<int64_t>(ordinal))
          .Str(c.name)
          .Str(c.operation)
          .Int(nth)
          .Int(Signed(c.start_ns))
          .Int(Signed(c.end_ns))
          .Int(DurationNs(c.start_ns, c.end_ns))
          .Int(c.correlation_id)
          .StrOrNull(plugin, plugin ? Literal(CommunicatorHash(primary->comm_hash)) : 0)
          .StrOrNull(plugin, plugin ? Text(primary->func) : 0)
          .IntOrNull(plugin, plugin ? Signed(primary->seq) : 0)
          .IntOrNull(plugin, Signed(bytes))
          .Int(static_cast<int64_t>(mine.size()))
          .IntOrNull(plugin && nranks > 0, nranks)
          .StrOrNull(plugin, plugin ? Literal(algorithm) : 0);
    }
    begin = end;
  }
}

void PartRowBuilder::WriteProcesses() {
  // A process's last record has its end; records of a process may repeat.
  std::map<uint32_t, ProcessRecord> last;
  for (const ProcessRecord& p : processes) {
    auto [it, inserted] = last.try_emplace(p.pid, p);
    if (!inserted && p.end_ns >= it->second.end_ns) it->second = p;
  }
  const uint32_t file = Literal(part_.trace_file);
  for (const auto& [pid, p] : last) {
    Row(T::kProcesses, pid)
        .Int(p.parent_pid)
        .Str(Text(p.command))
        .Int(Signed(p.start_ns))
        .IntOrNull(p.end_ns != 0, Signed(p.end_ns))
        .Int(clocks_.OffsetOf(pid))
        .Str(file);
  }
  std::map<uint32_t, RankRecord> rank_of;
  for (const RankRecord& r : ranks_) rank_of[r.pid] = r;
  for (const auto& [pid, r] : rank_of) {
    Row(T::kRanks, pid)
        .Int(r.local_rank)
        .Int(r.world_size)
        .Int(r.local_world_size)
        .Int(r.node_rank)
        .Str(Text(r.launcher))
        .Str(Text(r.job_id))
        .Str(Text(r.master))
        .Str(Text(r.boot_id))
        .Str(Text(r.visible_devices));
  }
  std::map<std::pair<uint32_t, uint32_t>, DeviceRecord> device_of;
  for (const DeviceRecord& d : devices_) device_of[{d.pid, d.device_id}] = d;
  for (const auto& [key, d] : device_of) {
    Row(T::kDevices, d.pid)
        .Int(d.device_id)
        .Str(Text(d.name))
        .Int(d.compute_major)
        .Int(d.compute_minor)
        .Int(d.sm_count)
        .Int(Signed(d.global_memory_bytes))
        .Int(d.core_clock_khz);
  }
}

void PartRowBuilder::WriteStacksAndFrames() {
  if (stack_ids_.empty()) return;
  // Named as the flame graph names them (one resolver), so its folded lines can be rebuilt.
  SymbolTable symbols(strings, display_);
  symbols.AddAll(modules, LaunchSink::symbols, python_codes, threads);
  const std::vector<RankRecord> no_ranks;
  flame::NameSources names{strings, stacks, symbols, processes, threads, no_ranks};
  FlameGraphOptions options;
  options.python_internals = display_.python_internals;
  options.native_detail = display_.native_detail;
  FlameGraph graph;
  flame::GraphResolver resolver(names, options, graph);
  std::map<std::tuple<std::string, std::string, std::string, uint32_t, std::string, uint32_t>,
           int64_t>
      frame_ids;
  std::vector<Frame> frames;
  for (const auto& [key, local_id] : stack_ids_) {
    const auto [stack_id, tid] = key;
    frames.clear();
    if (stack_id < stacks.size()) symbols.ResolveStack(stacks[stack_id], frames, tid);
    const std::vector<uint32_t>& shown = resolver.CpuFrames(stack_id, tid);
    const uint32_t pid = stack_id < stacks.size() ? stacks[stack_id].pid : part_.pid;
    for (size_t i = 0; i < frames.size() && i < shown.size(); ++i) {
      const Frame& f = frames[i];
      auto [it, inserted] = frame_ids.try_emplace(
          std::make_tuple(std::string(FrameKindName(f)), std::string(f.function),
                          std::string(f.file), f.line, std::string(f.module), shown[i]),
          id_base_ + static_cast<int64_t>(frame_ids.size() + 1));
      if (inserted) {
        Row(T::kFrames, pid)
            .Int(it->second)
            .Str(Literal(FrameKindName(f)))
            .Str(Literal(f.function))
            .StrOrNull(!f.file.empty(), Literal(f.file))
            .IntOrNull(f.line != 0, f.line)
            .StrOrNull(!f.module.empty(), Literal(f.module))
            .Str(Literal(graph.frames[shown[i]].name));
      }
      Row(T::kStacks, pid).Int(id_base_ + local_id).Int(static_cast<int64_t>(i)).Int(it->second);
    }
  }
}

Status PartRowBuilder::Finish() {
  WriteCollectives();
  WriteProcesses();
  WriteStacksAndFrames();
  for (DatasetTable table : AllDatasetTables()) {
    if (status_.ok()) status_ = Flush(table);
  }
  if (out_ == nullptr && status_.ok()) {
    const ProcessIdentity* p = scan_.Find(part_.pid);
    part_.rank = p != nullptr ? p->rank : -1;
    Result<std::unique_ptr<DatasetPartSink>> opened = sink_.OpenPart(part_);
    if (!opened.ok()) return opened.status();
    out_ = std::move(*opened);
  }
  if (out_ != nullptr) {
    Status closed = out_->Close();
    if (status_.ok()) status_ = closed;
  }
  return status_;
}

}  // namespace gpuperf
