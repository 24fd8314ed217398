#include "inject/nccl/nccl_events.h"

#include <algorithm>
#include <cstring>
#include <string_view>

namespace gpuperf::inject {
namespace {

// Copies NCCL's string (a literal of libnccl) into `out`, bounded: the slot never points into
// NCCL's memory after Start returns.
const char* CopyName(const char* text, char* out, size_t size) {
  if (text == nullptr) return nullptr;
  size_t n = strnlen(text, size - 1);
  memcpy(out, text, n);
  out[n] = '\0';
  return out;
}

}  // namespace

uint32_t NcclTypeSize(const char* datatype) {
  if (datatype == nullptr) return 0;
  struct Known {
    const char* name;
    uint32_t size;
  };
  // NCCL's ncclDatatypeToString names.
  static constexpr Known kKnown[] = {
      {"ncclInt8", 1},    {"ncclUint8", 1},    {"ncclInt32", 4},      {"ncclUint32", 4},
      {"ncclInt64", 8},   {"ncclUint64", 8},   {"ncclFloat16", 2},    {"ncclFloat32", 4},
      {"ncclFloat64", 8}, {"ncclBfloat16", 2}, {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1},
  };
  for (const Known& known : kKnown) {
    if (strcmp(datatype, known.name) == 0) return known.size;
  }
  return 0;
}

NcclEventTable::Comm* NcclEventTable::AddComm(uint64_t comm_hash, const char* name, int32_t rank,
                                              int32_t nranks, int32_t nnodes,
                                              uint32_t plugin_version, uint64_t now_ns) {
  const size_t index = comm_count_.fetch_add(1, std::memory_order_relaxed);
  if (index >= kCommSlots) return nullptr;
  Comm& comm = comms_[index];
  comm.comm_hash = comm_hash;
  comm.rank = rank;
  comm.nranks = nranks;
  comm.nnodes = nnodes;
  comm.plugin_version = plugin_version;
  comm.timestamp_ns = now_ns;
  CopyName(name, comm.name, sizeof(comm.name));
  comm.ready.store(true, std::memory_order_release);
  return &comm;
}

NcclEventTable::Comm* NcclEventTable::FindComm(void* context) {
  const auto* begin = reinterpret_cast<const char*>(comms_);
  const auto* at = static_cast<const char*>(context);
  if (at < begin || at >= begin + sizeof(comms_) || (at - begin) % sizeof(Comm) != 0) {
    return nullptr;
  }
  Comm* comm = static_cast<Comm*>(context);
  return comm->ready.load(std::memory_order_acquire) ? comm : nullptr;
}

void* NcclEventTable::Start(Comm* comm, const NcclCollectiveStart& fields, uint32_t tid,
                            uint64_t now_ns) {
  // A bounded probe from a shared cursor: threads rarely meet on one slot, and a table
  // whose slots are all taken costs 64 loads, not a scan.
  constexpr size_t kProbes = 64;
  size_t at = cursor_.fetch_add(1, std::memory_order_relaxed);
  for (size_t probe = 0; probe < kProbes; ++probe, ++at) {
    Slot& slot = slots_[at % kEventSlots];
    uint32_t expected = kFree;
    if (slot.state.load(std::memory_order_relaxed) != kFree ||
        !slot.state.compare_exchange_strong(expected, kRunning, std::memory_order_acquire)) {
      continue;
    }
    slot.comm = comm;
    slot.fields = fields;
    slot.fields.func = CopyName(fields.func, slot.text[0], kNameBytes);
    slot.fields.datatype = CopyName(fields.datatype, slot.text[1], kNameBytes);
    slot.fields.algorithm = CopyName(fields.algorithm, slot.text[2], kNameBytes);
    slot.fields.protocol = CopyName(fields.protocol, slot.text[3], kNameBytes);
    slot.tid = tid;
    slot.start_ns = now_ns;
    slot.end_ns = 0;
    return &slot;
  }
  dropped_.fetch_add(1, std::memory_order_relaxed);
  return nullptr;
}

bool NcclEventTable::Stop(void* handle, uint64_t now_ns) {
  const auto* begin = reinterpret_cast<const char*>(slots_);
  const auto* at = static_cast<const char*>(handle);
  if (at < begin || at >= begin + sizeof(slots_) || (at - begin) % sizeof(Slot) != 0) {
    return false;
  }
  Slot& slot = *static_cast<Slot*>(handle);
  if (slot.state.load(std::memory_order_relaxed) != kRunning) return false;
  slot.end_ns = now_ns;
  slot.state.store(kStopped, std::memory_order_release);
  return true;
}

void NcclEventTable::Drain(uint32_t pid, NameTable& names,
                           std::vector<NcclCollectiveRecord>& collectives,
                           std::vector<NcclCommRecord>& comms, bool final) {
  auto lock = names.Lock();
  const size_t comm_count = std::min(comm_count_.load(std::memory_order_relaxed), kCommSlots);
  for (size_t i = 0; i < comm_count; ++i) {
    Comm& comm = comms_[i];
    if (comm.written || !comm.ready.load(std::memory_order_acquire)) continue;
    NcclCommRecord record;
    record.pid = pid;
    record.comm_hash = comm.comm_hash;
    record.name = names.InternLocked(static_cast<const char*>(comm.name));
    record.rank = comm.rank;
    record.nranks = comm.nranks;
    record.nnodes = comm.nnodes;
    record.plugin_version = comm.plugin_version;
    record.timestamp_ns = comm.timestamp_ns;
    comms.push_back(record);
    comm.written = true;
  }
  for (Slot& slot : slots_) {
    const uint32_t state = slot.state.load(std::memory_order_acquire);
    if (state == kFree) continue;
    if (state == kRunning) {
      if (final) ++unfinished_;
      continue;
    }
    const NcclCollectiveStart& f = slot.fields;
    NcclCollectiveRecord record;
    record.pid = pid;
    record.tid = slot.tid;
    record.comm_hash = slot.comm->comm_hash;
    record.rank = f.rank >= 0 ? f.rank : slot.comm->rank;
    record.nranks = slot.comm->nranks;
    record.seq = f.seq;
    // InternLocked(const char*) caches by pointer; the slot's buffers are reused with other
    // text, so these go by their text.
    record.func = names.InternLocked(std::string_view(f.func ? f.func : ""));
    record.count = f.count;
    record.type_size = NcclTypeSize(f.datatype);
    record.datatype = names.InternLocked(std::string_view(f.datatype ? f.datatype : ""));
    record.root = f.root;
    record.algorithm = names.InternLocked(std::string_view(f.algorithm ? f.algorithm : ""));
    record.protocol = names.InternLocked(std::string_view(f.protocol ? f.protocol : ""));
    record.channels = f.channels;
    record.start_ns = slot.start_ns;
    record.end_ns = slot.end_ns;
    collectives.push_back(record);
    slot.state.store(kFree, std::memory_order_release);
  }
  std::sort(collectives.begin(), collectives.end(),
            [](const NcclCollectiveRecord& a, const NcclCollectiveRecord& b) {
              return a.start_ns < b.start_ns;
            });
}

}  // namespace gpuperf::inject
