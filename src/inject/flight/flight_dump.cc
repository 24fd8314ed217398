// FlightRing's way back out: decoding sealed segments and writing the window as a trace.
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <type_traits>

#include "format/file_format.h"
#include "format/record_codec.h"
#include "inject/flight/flight_records.h"
#include "inject/flight/flight_ring.h"

namespace gpuperf::inject {
namespace {

// Calls visit(records, number) for each record list of a batch.
template <class Visit>
void ForEachList(RecordBatch& batch, Visit&& visit) {
#define GPUPERF_FLIGHT_VISIT(Type, name, plural, number) visit(batch.plural);
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_FLIGHT_VISIT)
#undef GPUPERF_FLIGHT_VISIT
}
template <class Visit>
void ForEachList(const RecordBatch& batch, Visit&& visit) {
#define GPUPERF_FLIGHT_VISIT(Type, name, plural, number) visit(batch.plural);
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_FLIGHT_VISIT)
#undef GPUPERF_FLIGHT_VISIT
}

// Decides which timed records of a window are kept: those whose time reaches the window
// (a record without a time counts at its segment's newest), and launch-side records of GPU
// work that does (`work`: sorted correlation ids).
class WindowFilter {
 public:
  WindowFilter(uint64_t cutoff_ns, const std::vector<uint32_t>* work)
      : cutoff_ns_(cutoff_ns), work_(work) {}

  template <class T>
  bool Keeps(const T& record, uint64_t untimed_ns) const {
    if (TimeOf(record, untimed_ns) >= cutoff_ns_) return true;
    if constexpr (kFlightLaunchSide<T>) {
      return work_ != nullptr &&
             std::binary_search(work_->begin(), work_->end(), record.correlation_id);
    }
    return false;
  }

  template <class T>
  static uint64_t TimeOf(const T& record, uint64_t untimed_ns) {
    const uint64_t time = FlightTime(record);
    return time != 0 ? time : untimed_ns;
  }

 private:
  uint64_t cutoff_ns_;
  const std::vector<uint32_t>* work_;
};

// Calls visit(chunk) for each whole chunk of a segment.
template <class Visit>
void ForEachChunk(std::string_view chunks, Visit&& visit) {
  while (chunks.size() >= format::kChunkHeaderSize) {
    uint32_t payload_size = 0;
    std::memcpy(&payload_size, chunks.data() + 8, 4);
    const size_t size = format::kChunkHeaderSize + size_t{payload_size};
    if (size > chunks.size()) return;
    visit(chunks.substr(0, size));
    chunks.remove_prefix(size);
  }
}

void SortUnique(std::vector<uint32_t>& ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

}  // namespace

bool FlightRing::Decode(const Segment& segment, RecordBatch& out) const {
  ForEachList(out, [](auto& list) { list.clear(); });
  GrowIdentity();
  format::IdMaps ids{identity_, identity_};
  bool ok = true;
  std::string raw;
  ForEachChunk(segment.chunks, [&](std::string_view chunk) {
    uint16_t type = 0, flags = 0;
    uint32_t payload_size = 0, raw_size = 0, count = 0;
    std::memcpy(&type, chunk.data() + 4, 2);
    std::memcpy(&flags, chunk.data() + 6, 2);
    std::memcpy(&payload_size, chunk.data() + 8, 4);
    std::memcpy(&raw_size, chunk.data() + 12, 4);
    std::memcpy(&count, chunk.data() + 16, 4);
    const char* payload = chunk.data() + format::kChunkHeaderSize;
    if (flags & format::kChunkFlagZstd) {
      raw.resize(raw_size);
      const size_t size = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(dctx_), raw.data(),
                                              raw.size(), payload, payload_size);
      if (ZSTD_isError(size) || size != raw.size()) {
        ok = false;
        return;
      }
    } else {
      raw.assign(payload, payload_size);
    }
    format::ByteCursor in(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
    switch (type) {
#define GPUPERF_FLIGHT_DECODE(Type, name, plural, number)                     \
  case number:                                                                \
    ok = ok && format::DecodeFixed<Type##Record>(in, count, ids, out.plural); \
    break;
      GPUPERF_FIXED_RECORD_TYPES(GPUPERF_FLIGHT_DECODE)
#undef GPUPERF_FLIGHT_DECODE
      default:
        ok = false;
    }
  });
  return ok;
}

void FlightRing::AddChunk(std::string_view chunk) {
  Segment holder;
  holder.chunks.assign(chunk);
  RecordBatch records;
  if (!Decode(holder, records)) return;
  ForEachList(records, [this](const auto& list) {
    for (const auto& record : list) Add(record);
  });
}

uint64_t FlightRing::CountFrom(const Segment& segment, uint64_t cutoff_ns) const {
  RecordBatch decoded;
  if (!Decode(segment, decoded)) return segment.records;  // unreadable: all of it is lost
  const WindowFilter filter(cutoff_ns, nullptr);
  uint64_t count = 0;
  ForEachList(decoded, [&](const auto& list) {
    for (const auto& record : list) count += filter.Keeps(record, segment.newest_ns);
  });
  return count;
}

void FlightRing::GrowIdentity() const {
  const size_t size = static_cast<size_t>(std::max(max_string_id_, max_stack_id_)) + 1;
  if (identity_.size() >= size) return;
  const size_t old = identity_.size();
  identity_.resize(size);
  std::iota(identity_.begin() + old, identity_.end(), static_cast<uint32_t>(old));
}

Result<FlightDumpResult> FlightRing::Dump(const std::string& path, uint64_t now_ns,
                                          std::span<const StatRecord> stat_overrides) {
  FlightDumpResult result;
  result.end_ns = now_ns;
  result.window_start_ns = now_ns > options_.window_ns ? now_ns - options_.window_ns : 0;
  const uint64_t cutoff = result.window_start_ns;

  // Segments that reach back before the window are decoded and filtered; the others are
  // written as they are. Calls made before the window, in those segments and the open one,
  // are kept if their GPU work is in the window: their ids first.
  std::vector<RecordBatch> before(segments_.size());
  std::vector<uint32_t> early_calls;
  auto collect_early = [&](const RecordBatch& batch, uint64_t untimed_ns) {
    ForEachList(batch, [&](const auto& list) {
      using T = typename std::decay_t<decltype(list)>::value_type;
      if constexpr (kFlightLaunchSide<T>) {
        for (const T& record : list) {
          if (WindowFilter::TimeOf(record, untimed_ns) < cutoff) {
            early_calls.push_back(record.correlation_id);
          }
        }
      }
    });
  };
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (segments_[i].oldest_ns < cutoff && Decode(segments_[i], before[i])) {
      collect_early(before[i], segments_[i].newest_ns);
    }
  }
  collect_early(open_, now_ns);
  SortUnique(early_calls);

  // Then the GPU work in the window with those ids, looked for only where it can be.
  std::vector<uint32_t> work;
  const WindowFilter by_time(cutoff, nullptr);
  auto collect_work = [&](const RecordBatch& batch, uint64_t untimed_ns) {
    ForEachList(batch, [&](const auto& list) {
      for (const auto& record : list) {
        if (!by_time.Keeps(record, untimed_ns)) continue;
        ForEachWorkCorrelation(record, [&](uint32_t id) {
          if (std::binary_search(early_calls.begin(), early_calls.end(), id)) work.push_back(id);
        });
      }
    });
  };
  if (!early_calls.empty()) {
    RecordBatch decoded;
    for (size_t i = 0; i < segments_.size(); ++i) {
      const Segment& segment = segments_[i];
      if (segment.newest_ns < cutoff || segment.max_work_id < early_calls.front() ||
          segment.min_work_id > early_calls.back()) {
        continue;
      }
      if (segment.oldest_ns < cutoff) {
        collect_work(before[i], segment.newest_ns);
      } else if (Decode(segment, decoded)) {
        collect_work(decoded, segment.newest_ns);
      }
    }
    collect_work(open_, now_ns);
    SortUnique(work);
  }

  // The trace: every definition, then the window, then the counters.
  const std::string part = path + ".part";
  auto created = TraceWriter::Create(part);
  if (!created.ok()) return created.status();
  TraceWriter& out = **created;
  for (const auto& [id, text] : strings_) out.AddString(id, text);
  for (const PythonCodeRecord& code : python_codes_) out.AddPythonCode(code);
  for (const StackRecord& stack : stacks_) out.AddStack(stack);
  for (const SymbolRecord& symbol : symbols_) out.AddSymbol(symbol);
  for (const ModuleRecord& module : modules_) out.Add(module);
  for (const auto& [key, thread] : threads_) out.Add(thread);
  for (const auto& [pid, process] : processes_) {
    ProcessRecord covered = process;
    covered.start_ns = std::max(process.start_ns, cutoff);
    covered.end_ns = now_ns;
    out.Add(covered);
  }
  for (const DeviceRecord& device : devices_) out.Add(device);
  for (const ContextRecord& context : contexts_) out.Add(context);
  for (const auto& [pid, clock] : clocks_) out.Add(clock);
  for (const auto& [pid, rank] : ranks_) out.Add(rank);
  for (const NcclCommRecord& comm : nccl_comms_) out.Add(comm);

  const WindowFilter keep(cutoff, &work);
  auto write = [&](const RecordBatch& batch, uint64_t untimed_ns) {
    ForEachList(batch, [&](const auto& list) {
      for (const auto& record : list) {
        if (!keep.Keeps(record, untimed_ns)) continue;
        out.Add(record);
        ++result.records_written;
      }
    });
  };
  for (size_t i = 0; i < segments_.size(); ++i) {
    const Segment& segment = segments_[i];
    if (segment.oldest_ns >= cutoff) {
      ForEachChunk(segment.chunks, [&](std::string_view chunk) { out.AddChunk(chunk); });
      result.records_written += segment.records;
    } else {
      write(before[i], segment.newest_ns);
    }
  }
  write(open_, now_ns);

  std::map<std::pair<uint32_t, uint32_t>, uint64_t> stats = stat_values_;
  for (const StatRecord& stat : stat_overrides) stats[{stat.pid, stat.stat}] = stat.value;
  for (const auto& [key, value] : stats) {
    if (value != 0) out.Add(StatRecord{key.first, key.second, value});
  }
  Status closed = out.Close();
  result.bytes_written = out.stats().bytes_written;
  created->reset();
  if (!closed.ok() || std::rename(part.c_str(), path.c_str()) != 0) {
    std::remove(part.c_str());
    return closed.ok() ? Error(StatusCode::kIoError, "cannot rename " + part + " to " + path)
                       : closed;
  }
  return result;
}

}  // namespace gpuperf::inject
