// The binary interface of NCCL's profiler plugin, as NCCL 2.26-2.28 calls it: our own
// declarations of the parts gpuperf uses, laid out as NCCL's ext-profiler headers lay them
// out (profiler_v4.h, profiler_v5.h of NCCL 2.28.9). NCCL looks the table up by name
// (ncclProfiler_v5 first, then v4, ...) in the library NCCL_PROFILER_PLUGIN names.
//
// Only the event descriptor's common head and its collective member are declared: gpuperf
// reads nothing else, and NCCL owns the memory, so a shorter union reads the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gpuperf::inject::nccl_abi {

// ncclResult_t values the plugin returns.
inline constexpr int kSuccess = 0;
inline constexpr int kInternalError = 3;

// Event type bits (the activation mask and the descriptor's type).
inline constexpr int kProfileGroup = 1 << 0;
inline constexpr int kProfileColl = 1 << 1;
inline constexpr int kProfileP2p = 1 << 2;
inline constexpr int kProfileProxyOp = 1 << 3;
inline constexpr int kProfileProxyStep = 1 << 4;
inline constexpr int kProfileProxyCtrl = 1 << 5;
inline constexpr int kProfileKernelCh = 1 << 6;
inline constexpr int kProfileNetPlugin = 1 << 7;
inline constexpr int kProfileGroupApi = 1 << 8;       // v5 only
inline constexpr int kProfileCollApi = 1 << 9;        // v5 only
inline constexpr int kProfileP2pApi = 1 << 10;        // v5 only
inline constexpr int kProfileKernelLaunch = 1 << 11;  // v5 only

// The collective member of the descriptor union; v5 appends parentGroup, which we skip.
struct CollDescr {
  uint64_t seq_number;
  const char* func;
  const void* send_buff;
  void* recv_buff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t channels;
  uint8_t warps;
  const char* algo;
  const char* proto;
};

struct EventDescrV5 {
  uint64_t type;
  void* parent;
  int rank;
  union {
    CollDescr coll;
  };
};

struct EventDescrV4 {
  uint8_t type;
  void* parent;
  int rank;
  union {
    CollDescr coll;
  };
};

// NCCL's logger: (level, subsystem flags, file, line, printf format, ...). Never called.
using DebugLogger = void (*)(int, unsigned long, const char*, int, const char*, ...);

struct ProfilerV5 {
  const char* name;
  int (*init)(void** context, uint64_t comm_hash, int* activation_mask, const char* comm_name,
              int nnodes, int nranks, int rank, DebugLogger log);
  int (*start_event)(void* context, void** handle, EventDescrV5* descr);
  int (*stop_event)(void* handle);
  int (*record_event_state)(void* handle, int state, void* state_args);
  int (*finalize)(void* context);
};

struct ProfilerV4 {
  const char* name;
  int (*init)(void** context, int* activation_mask, const char* comm_name, uint64_t comm_hash,
              int nnodes, int nranks, int rank, DebugLogger log);
  int (*start_event)(void* context, void** handle, EventDescrV4* descr);
  int (*stop_event)(void* handle);
  int (*record_event_state)(void* handle, int state, void* state_args);
  int (*finalize)(void* context);
};

// Where the fields sit in NCCL's own layout (x86-64): checked at compile time.
static_assert(offsetof(EventDescrV5, coll) == 24 && offsetof(EventDescrV4, coll) == 24);
static_assert(offsetof(CollDescr, count) == 32 && offsetof(CollDescr, root) == 40 &&
              offsetof(CollDescr, datatype) == 48 && offsetof(CollDescr, channels) == 56 &&
              offsetof(CollDescr, algo) == 64 && offsetof(CollDescr, proto) == 72);

}  // namespace gpuperf::inject::nccl_abi
