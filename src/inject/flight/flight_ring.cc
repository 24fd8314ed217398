#include "inject/flight/flight_ring.h"

#include <zstd.h>

#include <algorithm>

#include "format/file_trace_writer.h"
#include "format/record_codec.h"
#include "inject/flight/flight_records.h"

namespace gpuperf::inject {
namespace {

constexpr uint64_t kMs = 1'000'000ull;

uint64_t Clamp(uint64_t value, uint64_t low, uint64_t high) {
  return std::min(std::max(value, low), high);
}

// Heap bytes a definition holds, roughly (the string's or vector's payload plus the entry).
uint64_t DefinitionBytes(const StackRecord& stack) {
  return sizeof(StackRecord) + stack.pcs.size() * sizeof(uint64_t);
}
uint64_t DefinitionBytes(const PythonCodeRecord& code) {
  return sizeof(PythonCodeRecord) + code.line_table.size();
}
uint64_t DefinitionBytes(const SymbolRecord& symbol) {
  return sizeof(SymbolRecord) + symbol.frames.size() * sizeof(SymbolFrame);
}

}  // namespace

FlightRing::FlightRing(FlightRingOptions options, Clock clock)
    : options_(options),
      clock_(std::move(clock)),
      cctx_(ZSTD_createCCtx()),
      dctx_(ZSTD_createDCtx()) {
  // About 30 segments per window: eviction takes a thirtieth of it at a time.
  if (options_.segment_ns == 0) {
    options_.segment_ns = Clamp(options_.window_ns / 30, 100 * kMs, 10'000 * kMs);
  }
  if (options_.segment_bytes == 0) {
    options_.segment_bytes = Clamp(options_.memory_cap_bytes / 64, 64ull << 10, 8ull << 20);
  }
  open_started_ns_ = clock_();
}

FlightRing::~FlightRing() {
  ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(cctx_));
  ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(dctx_));
}

StringId FlightRing::InternString(std::string_view text) {
  // The recorder names its strings itself (AddString); this is here for completeness.
  if (text.empty()) return 0;
  const StringId id = max_string_id_ + 1;
  AddString(id, text);
  return id;
}

void FlightRing::AddString(StringId id, std::string_view text) {
  if (id == 0) return;
  strings_.emplace_back(id, std::string(text));
  max_string_id_ = std::max(max_string_id_, id);
  definition_bytes_ += sizeof(strings_[0]) + text.size();
}

void FlightRing::AddStack(const StackRecord& stack) {
  stacks_.push_back(stack);
  max_stack_id_ = std::max(max_stack_id_, stack.id);
  definition_bytes_ += DefinitionBytes(stack);
}

void FlightRing::AddSymbol(const SymbolRecord& symbol) {
  symbols_.push_back(symbol);
  definition_bytes_ += DefinitionBytes(symbol);
}

void FlightRing::AddPythonCode(const PythonCodeRecord& code) {
  python_codes_.push_back(code);
  definition_bytes_ += DefinitionBytes(code);
}

// Definitions: the latest of each process, thread, clock, stat and rank; every device, context
// and module.
void FlightRing::Define(const ProcessRecord& record) {
  processes_[record.pid] = record;
}
void FlightRing::Define(const ThreadRecord& record) {
  auto [it, inserted] = threads_.insert_or_assign({record.pid, record.tid}, record);
  if (inserted) definition_bytes_ += sizeof(ThreadRecord) + 32;
}
void FlightRing::Define(const DeviceRecord& record) {
  devices_.push_back(record);
  definition_bytes_ += sizeof(record);
}
void FlightRing::Define(const ContextRecord& record) {
  contexts_.push_back(record);
  definition_bytes_ += sizeof(record);
}
void FlightRing::Define(const ModuleRecord& record) {
  modules_.push_back(record);
  definition_bytes_ += sizeof(record);
}
void FlightRing::Define(const ClockRecord& record) {
  clocks_[record.pid] = record;
}
void FlightRing::Define(const StatRecord& record) {
  stat_values_[{record.pid, record.stat}] = record.value;
}
void FlightRing::Define(const RankRecord& record) {
  ranks_[record.pid] = record;
}
void FlightRing::Define(const NcclCommRecord& record) {
  nccl_comms_.push_back(record);
  definition_bytes_ += sizeof(record);
}

// Every other record type is timed: it goes to the open segment.
#define GPUPERF_FLIGHT_ADD_IMPL(Type, name, plural, number) \
  void FlightRing::Add(const Type##Record& record) {        \
    Take(record, open_.plural);                             \
  }
GPUPERF_FIXED_RECORD_TYPES(GPUPERF_FLIGHT_ADD_IMPL)
#undef GPUPERF_FLIGHT_ADD_IMPL

template <class T>
void FlightRing::Take(const T& record, std::vector<T>& open) {
  if constexpr (kFlightDefinition<T>) {
    Define(record);
  } else {
    Keep(record, open);
  }
}

template <class T>
void FlightRing::Keep(const T& record, std::vector<T>& open) {
  open.push_back(record);
  ++open_records_;
  open_bytes_ += sizeof(T);
  NoteOpenTime(FlightTime(record));
  ForEachWorkCorrelation(record, [this](uint32_t id) {
    open_min_work_id_ = std::min(open_min_work_id_, id);
    open_max_work_id_ = std::max(open_max_work_id_, id);
  });
  if (open_bytes_ >= options_.segment_bytes) {
    UpdatePeak();  // the open segment at its largest
    const uint64_t now = clock_();
    Seal(now);
    AgeAndCap(now);
  }
}

void FlightRing::NoteOpenTime(uint64_t time_ns) {
  if (time_ns == 0) {
    open_untimed_ = true;  // timed by the segment: when it is sealed
    return;
  }
  open_oldest_ns_ = std::min(open_oldest_ns_, time_ns);
  open_newest_ns_ = std::max(open_newest_ns_, time_ns);
}

Status FlightRing::Flush() {
  const uint64_t now = clock_();
  if (open_records_ != 0 && now - open_started_ns_ >= options_.segment_ns) Seal(now);
  AgeAndCap(now);
  return Status::Ok();
}

// Encodes and compresses each record list as the trace file's chunk of it.
void FlightRing::Seal(uint64_t now_ns) {
  open_started_ns_ = now_ns;
  if (open_records_ == 0) return;
  Segment segment;
  segment.records = open_records_;
  segment.oldest_ns = open_untimed_ ? std::min(open_oldest_ns_, now_ns) : open_oldest_ns_;
  segment.newest_ns = open_untimed_ ? std::max(open_newest_ns_, now_ns) : open_newest_ns_;
  segment.min_work_id = open_min_work_id_;
  segment.max_work_id = open_max_work_id_;
#define GPUPERF_FLIGHT_SEAL(Type, name, plural, number)                                        \
  if (!open_.plural.empty()) {                                                                 \
    scratch_.clear();                                                                          \
    format::EncodeFixed<Type##Record>(open_.plural, scratch_);                                 \
    format::FrameChunk(number, static_cast<uint32_t>(open_.plural.size()), scratch_, cctx_, 1, \
                       segment.chunks);                                                        \
  }
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_FLIGHT_SEAL)
#undef GPUPERF_FLIGHT_SEAL
  segment.chunks.shrink_to_fit();  // the ring holds only this
  segment_bytes_ += segment.chunks.size();
  segments_.push_back(std::move(segment));
  // Working memory goes back between seals: the encoder sizes its buffer for the worst case
  // (10 bytes a field), and one large delivery must not leave the open lists big for good.
  std::string().swap(scratch_);
  open_ = RecordBatch();
  open_records_ = 0;
  open_bytes_ = 0;
  open_oldest_ns_ = UINT64_MAX;
  open_newest_ns_ = 0;
  open_untimed_ = false;
  open_min_work_id_ = UINT32_MAX;
  open_max_work_id_ = 0;
}

void FlightRing::AgeAndCap(uint64_t now_ns) {
  const uint64_t keep_ns = options_.window_ns + options_.grace_ns;
  const uint64_t horizon = now_ns > keep_ns ? now_ns - keep_ns : 0;
  while (!segments_.empty() && segments_.front().newest_ns < horizon) {
    segment_bytes_ -= segments_.front().chunks.size();
    segments_.pop_front();
  }
  while (!evictions_.empty() && evictions_.front().newest_ns < horizon) evictions_.pop_front();
  while (!segments_.empty() && bytes() > options_.memory_cap_bytes) Evict(now_ns);
  UpdatePeak();
}

void FlightRing::Evict(uint64_t now_ns) {
  const Segment& oldest = segments_.front();
  const uint64_t cutoff = now_ns > options_.window_ns ? now_ns - options_.window_ns : 0;
  uint64_t in_window = 0;
  if (oldest.oldest_ns >= cutoff) {
    in_window = oldest.records;
  } else if (oldest.newest_ns >= cutoff) {
    in_window = CountFrom(oldest, cutoff);  // straddles the window's start: count exactly
  }
  if (in_window != 0) evictions_.push_back({oldest.newest_ns, in_window});
  segment_bytes_ -= oldest.chunks.size();
  segments_.pop_front();
}

uint64_t FlightRing::EvictedSince(uint64_t cutoff_ns) const {
  uint64_t total = 0;
  for (const Eviction& eviction : evictions_) {
    if (eviction.newest_ns >= cutoff_ns) total += eviction.records_in_window;
  }
  return total;
}

uint64_t FlightRing::bytes() const {
  return definition_bytes_ + segment_bytes_ + open_.ApproxBytes() + scratch_.capacity();
}

void FlightRing::UpdatePeak() {
  peak_bytes_ = std::max(peak_bytes_, bytes());
}

}  // namespace gpuperf::inject
