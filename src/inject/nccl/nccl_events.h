// What the NCCL profiler plugin (nccl_plugin.cc) records, kept apart from NCCL's interface so
// that tests drive it directly: a fixed table of collective events and one of communicators.
//
// NCCL calls the plugin on the app thread that launches a collective (or on CUDA's callback
// thread), so nothing here locks or allocates on that path: an event claims a free slot with
// one compare-and-swap (a bounded probe; a full table drops the event and counts it), copies
// the descriptor's fields and strings into the slot, and publishes it when stopped. The
// writer thread drains stopped slots into records each period (Drain).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpuperf/records.h"
#include "inject/name_table.h"

namespace gpuperf::inject {

// A descriptor's collective fields, as the plugin read them from NCCL.
struct NcclCollectiveStart {
  uint64_t seq = 0;
  const char* func = nullptr;
  const char* datatype = nullptr;
  const char* algorithm = nullptr;
  const char* protocol = nullptr;
  uint64_t count = 0;
  int32_t root = -1;
  int32_t rank = -1;
  uint32_t channels = 0;
};

// Bytes per element of an NCCL datatype name ("ncclFloat32" -> 4); 0 when unknown.
uint32_t NcclTypeSize(const char* datatype);

class NcclEventTable {
 public:
  static constexpr size_t kEventSlots = 8192;
  static constexpr size_t kCommSlots = 256;
  static constexpr size_t kNameBytes = 24;

  // A communicator (the plugin's context); nullptr when the table of them is full.
  struct Comm;
  Comm* AddComm(uint64_t comm_hash, const char* name, int32_t rank, int32_t nranks, int32_t nnodes,
                uint32_t plugin_version, uint64_t now_ns);
  // The communicator of a context NCCL handed back; nullptr when it is not one of ours.
  Comm* FindComm(void* context);

  // A collective event: its handle for Stop, nullptr when the table is full (counted).
  void* Start(Comm* comm, const NcclCollectiveStart& fields, uint32_t tid, uint64_t now_ns);
  // Ends an event Start returned. False (nothing done) for a handle that is not a started
  // event of this table.
  bool Stop(void* handle, uint64_t now_ns);

  // Moves the stopped events and new communicators into records (writer thread only).
  // `final`: the recording ends; events still running are counted as unfinished.
  void Drain(uint32_t pid, NameTable& names, std::vector<NcclCollectiveRecord>& collectives,
             std::vector<NcclCommRecord>& comms, bool final);

  // Counters since construction (the recorder mirrors them into its stats).
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  uint64_t unfinished() const { return unfinished_; }

  struct Comm {
    uint64_t comm_hash = 0;
    int32_t rank = -1, nranks = 0, nnodes = 0;
    uint32_t plugin_version = 0;
    uint64_t timestamp_ns = 0;
    char name[64] = {};
    std::atomic<bool> ready{false};  // filled in (AddComm publishes it)
    bool written = false;            // the writer's
  };

 private:
  enum SlotState : uint32_t { kFree = 0, kRunning = 1, kStopped = 2 };
  struct Slot {
    std::atomic<uint32_t> state{kFree};
    const Comm* comm = nullptr;
    NcclCollectiveStart fields;  // its strings point into `text`
    uint32_t tid = 0;
    uint64_t start_ns = 0, end_ns = 0;
    char text[4][kNameBytes] = {};
  };

  Slot slots_[kEventSlots];
  std::atomic<size_t> cursor_{0};
  std::atomic<uint64_t> dropped_{0};
  uint64_t unfinished_ = 0;
  Comm comms_[kCommSlots];
  std::atomic<size_t> comm_count_{0};  // claimed
};

}  // namespace gpuperf::inject
