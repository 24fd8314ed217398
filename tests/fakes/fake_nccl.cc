#include "fake_nccl.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <ctime>

namespace fake_nccl {
namespace {

// NCCL 2.28's descriptor and plugin layouts (profiler_v4.h, profiler_v5.h), declared here
// apart from the plugin's own (src/inject/nccl/nccl_profiler_abi.h) so that a mistake there is
// not repeated here: the union's collective member is its largest, so the sizes are NCCL's.
struct CollFields {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t nChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
  void* parentGroup;  // v5 only
};
struct DescrV5 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    CollFields coll;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
};
struct DescrV4 {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollFields coll;  // v4's ends before parentGroup
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
};
using Logger = void (*)(int, unsigned long, const char*, int, const char*, ...);
struct TableV5 {
  const char* name;
  int (*init)(void**, uint64_t, int*, const char*, int, int, int, Logger);
  int (*startEvent)(void*, void**, DescrV5*);
  int (*stopEvent)(void*);
  int (*recordEventState)(void*, int, void*);
  int (*finalize)(void*);
};
struct TableV4 {
  const char* name;
  int (*init)(void**, int*, const char*, uint64_t, int, int, int, Logger);
  int (*startEvent)(void*, void**, DescrV4*);
  int (*stopEvent)(void*);
  int (*recordEventState)(void*, int, void*);
  int (*finalize)(void*);
};

constexpr uint64_t kGroup = 1 << 0, kColl = 1 << 1, kProxyCtrl = 1 << 5, kGroupApi = 1 << 8,
                   kCollApi = 1 << 9;

int FuncIndex(const char* func) {
  static const char* kFuncs[] = {"Broadcast", "Reduce",   "AllGather", "ReduceScatter",
                                 "AllReduce", "SendRecv", "Send",      "Recv"};
  for (int i = 0; i < 8; ++i) {
    if (strcmp(func, kFuncs[i]) == 0) return i;
  }
  return 15;
}

void Log(int, unsigned long, const char*, int, const char*, ...) {}

}  // namespace

bool Plugin::Load(const char* path, int max_version) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    fprintf(stderr, "fake-nccl: cannot open %s: %s\n", path, dlerror());
    return false;
  }
  if (max_version >= 5 && (table_ = dlsym(lib, "ncclProfiler_v5")) != nullptr) {
    version_ = 5;
  } else if ((table_ = dlsym(lib, "ncclProfiler_v4")) != nullptr) {
    version_ = 4;
  } else {
    fprintf(stderr, "fake-nccl: %s has no profiler table\n", path);
    return false;
  }
  return true;
}

bool Plugin::InitComm(uint64_t comm_hash, const char* name, int nranks, int rank) {
  rank_ = rank;
  int err = version_ == 5 ? static_cast<TableV5*>(table_)->init(&context_, comm_hash, &mask_, name,
                                                                1, nranks, rank, Log)
                          : static_cast<TableV4*>(table_)->init(&context_, &mask_, name, comm_hash,
                                                                1, nranks, rank, Log);
  if (err != 0) fprintf(stderr, "fake-nccl: the plugin refused the communicator (%d)\n", err);
  return err == 0;
}

int Plugin::Start(void** handle, uint64_t type, const Collective* c, uint64_t seq, void* parent) {
  *handle = nullptr;
  if (version_ == 5) {
    DescrV5 d{};
    d.type = type;
    d.parentObj = parent;
    d.rank = rank_;
    if (c != nullptr) {
      d.coll = CollFields{seq,         c->func, nullptr, nullptr, c->count, c->root,
                          c->datatype, 2,       16,      c->algo, c->proto, parent};
    }
    return static_cast<TableV5*>(table_)->startEvent(context_, handle, &d);
  }
  DescrV4 d{};
  d.type = static_cast<uint8_t>(type);
  d.parentObj = parent;
  d.rank = rank_;
  if (c != nullptr) {
    d.coll = CollFields{seq,         c->func, nullptr, nullptr, c->count, c->root,
                        c->datatype, 2,       16,      c->algo, c->proto, nullptr};
  }
  return static_cast<TableV4*>(table_)->startEvent(context_, handle, &d);
}

int Plugin::Stop(void* handle) {
  if (handle == nullptr) return 0;  // NCCL skips null handles
  return version_ == 5 ? static_cast<TableV5*>(table_)->stopEvent(handle)
                       : static_cast<TableV4*>(table_)->stopEvent(handle);
}

void Plugin::Group(const std::vector<Collective>& collectives,
                   const std::function<void()>& launch) {
  // The API events exist in v5 only; NCCL starts them because the mask has the collective bit.
  void* group_api = nullptr;
  std::vector<void*> api(collectives.size(), nullptr);
  if (version_ == 5 && (mask_ & (kColl | kGroupApi))) {
    Start(&group_api, kGroupApi, nullptr, 0, nullptr);
    for (size_t i = 0; i < collectives.size(); ++i) {
      Start(&api[i], kCollApi, nullptr, 0, group_api);
      Stop(api[i]);
    }
  }
  launch();  // ncclLaunchKernel; the plan's events follow it (hostStreamPlanTask)
  void* group = nullptr;
  if (mask_ & kColl) Start(&group, kGroup, nullptr, 0, nullptr);
  std::vector<void*> events(collectives.size(), nullptr);
  for (size_t i = 0; i < collectives.size(); ++i) {
    uint64_t& seq = seq_[FuncIndex(collectives[i].func)];
    if (mask_ & kColl)
      Start(&events[i], kColl, &collectives[i], seq, version_ == 5 ? api[i] : group);
    ++seq;  // NCCL counts whether or not the plugin is active
  }
  for (void* event : events) Stop(event);
  Stop(group);
  Stop(group_api);
}

void Plugin::Oddities() {
  void* handle = nullptr;
  Start(&handle, kProxyCtrl, nullptr, 0, nullptr);
  Stop(handle);
  int not_a_handle = 0;
  Stop(&not_a_handle);
  if (version_ == 5) {
    static_cast<TableV5*>(table_)->startEvent(context_, &handle, nullptr);
    static_cast<TableV5*>(table_)->recordEventState(nullptr, 22, nullptr);
  }
}

double Plugin::BenchNsPerCollective(int n) {
  const std::vector<Collective> one = {{"ReduceScatter", 4096}};
  timespec begin{}, end{};
  clock_gettime(CLOCK_MONOTONIC, &begin);
  for (int i = 0; i < n; ++i) Group(one, [] {});
  clock_gettime(CLOCK_MONOTONIC, &end);
  const double ns = (end.tv_sec - begin.tv_sec) * 1e9 + (end.tv_nsec - begin.tv_nsec);
  return n > 0 ? ns / n : 0;
}

void Plugin::Finalize() {
  if (context_ == nullptr) return;
  version_ == 5 ? static_cast<TableV5*>(table_)->finalize(context_)
                : static_cast<TableV4*>(table_)->finalize(context_);
}

}  // namespace fake_nccl
