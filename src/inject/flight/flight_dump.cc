// FlightRing's way back out: decoding sealed segments and writing the window as a trace.
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

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

// Decides which timed records of a window are kept: those whose time reaches the window,
// and launch-side records of GPU work that does (`work`: sorted correlation ids).
class WindowFilter {
 public:
  WindowFilter(uint64_t cutoff_ns, const std::vector<uint32_t>* work)
      : cutoff_ns_(cutoff_ns), work_(work) {}

  // `untimed_ns`: the time of records that carry none (their segment's).
  template <class T>
  bool Keeps(const T& record, uint64_t untimed_ns) const {
    uint64_t time = FlightTime(record);
    if (time == 0) time = untimed_ns;
    if constexpr (kFlightLaunchSide<T>) {
      if (FlightTime(record) == 0) time = 0;  // joined to its work only
      if (work_ != nullptr &&
          std::binary_search(work_->begin(), work_->end(), record.correlation_id)) {
        return true;
      }
    }
    return time >= cutoff_ns_;
  }

 private:
  uint64_t cutoff_ns_;
  const std::vector<uint32_t>* work_;
};

}  // namespace

bool FlightRing::Decode(const Segment& segment, RecordBatch& out) const {
  ForEachList(out, [](auto& list) { list.clear(); });
  if (segment.raw_bytes == 0) return segment.records == 0;
  std::string raw(segment.raw_bytes, '\0');
  const size_t size = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(dctx_), raw.data(), raw.size(),
                                          segment.blob.data(), segment.blob.size());
  if (ZSTD_isError(size) || size != raw.size()) return false;
  GrowIdentity();
  format::IdMaps ids{identity_, identity_};
  format::ByteCursor in(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
  while (in.remaining() > 0 && !in.failed()) {
    const uint64_t type = in.Varint();
    const uint64_t count = in.Varint();
    const uint64_t length = in.Varint();
    const uint8_t* payload = in.Bytes(length);
    if (payload == nullptr || count > UINT32_MAX) return false;
    format::ByteCursor list(payload, length);
    bool ok = false;
    switch (type) {
#define GPUPERF_FLIGHT_DECODE(Type, name, plural, number)                                        \
  case number:                                                                                   \
    ok = format::DecodeFixed<Type##Record>(list, static_cast<uint32_t>(count), ids, out.plural); \
    break;
      GPUPERF_FIXED_RECORD_TYPES(GPUPERF_FLIGHT_DECODE)
#undef GPUPERF_FLIGHT_DECODE
    }
    if (!ok) return false;
  }
  return !in.failed();
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

  // First pass: the correlation ids of the GPU work in the window.
  std::vector<uint32_t> work;
  const WindowFilter by_time(cutoff, nullptr);
  auto collect = [&](const RecordBatch& batch, uint64_t untimed_ns) {
    ForEachList(batch, [&](const auto& list) {
      for (const auto& record : list) {
        if (!by_time.Keeps(record, untimed_ns)) continue;
        ForEachWorkCorrelation(record, [&work](uint32_t id) { work.push_back(id); });
      }
    });
  };
  RecordBatch decoded;
  for (const Segment& segment : segments_) {
    if (segment.newest_ns >= cutoff && Decode(segment, decoded))
      collect(decoded, segment.newest_ns);
  }
  collect(open_, now_ns);
  std::sort(work.begin(), work.end());
  work.erase(std::unique(work.begin(), work.end()), work.end());

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
  for (const Segment& segment : segments_) {
    if (Decode(segment, decoded)) write(decoded, segment.newest_ns);
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
