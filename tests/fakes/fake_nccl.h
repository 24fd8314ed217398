// Stands in for NCCL 2.28's side of the profiler plugin interface in fake_cuda_app's "ranks"
// scenario: loads the library NCCL_PROFILER_PLUGIN names the way NCCL does (dlopen, then the
// table ncclProfiler_v5, else ncclProfiler_v4), initializes it per communicator, and around
// each collective makes the calls NCCL makes, in NCCL's order, with NCCL's descriptors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace fake_nccl {

struct Collective {
  const char* func = "AllReduce";
  size_t count = 0;
  const char* datatype = "ncclFloat32";
  int root = -1;
  const char* algo = "RING";
  const char* proto = "LL";
};

class Plugin {
 public:
  // `max_version` 4 skips the v5 table, as NCCL 2.26/2.27 would. False: no plugin (a line on
  // stderr says why).
  bool Load(const char* path, int max_version);
  int version() const { return version_; }
  // ncclCommInitRank's call of init. False when the plugin refused the communicator.
  bool InitComm(uint64_t comm_hash, const char* name, int nranks, int rank);
  // One group of collectives (one entry: a plain call) run by one kernel: the API events,
  // `launch` (the kernel's launch), then the plan's group and collective events, as
  // ncclGroupEnd does. Sequence numbers count per function, as NCCL's do.
  void Group(const std::vector<Collective>& collectives, const std::function<void()>& launch);
  // Calls NCCL never makes: an event type gpuperf does not ask for, a null descriptor, a
  // stop of a handle that is not the plugin's. The plugin must ignore them.
  void Oddities();
  // The plugin's cost: `n` single-collective groups with nothing launched, in ns per
  // collective (every call NCCL 2.28 makes for one, as Group makes them).
  double BenchNsPerCollective(int n);
  void Finalize();

 private:
  int Start(void** handle, uint64_t type, const Collective* coll, uint64_t seq, void* parent);
  int Stop(void* handle);

  void* table_ = nullptr;
  int version_ = 0;
  void* context_ = nullptr;
  int rank_ = 0;
  int mask_ = 0;
  uint64_t seq_[16] = {};
};

}  // namespace fake_nccl
