// fake_cuda_app: stands in for a CUDA application and libcuda on a machine without a GPU.
// It loads the injection library the way libcuda does on cuInit (CUDA_INJECTION64_PATH, dlopen,
// InitializeInjection once), then runs one scenario through the fake libcupti: runtime and
// driver API calls with callbacks, and the activity records the GPU would produce.
//
//   fake_cuda_app <scenario> [args]      (fake_cuda_app --list shows the scenarios)
//
// fake_cuda_app_nofp is the same program built with -O2 -fomit-frame-pointer, with one more
// scenario, `chain`, that launches through libraries built so too (tests/unwind/chain.h).
//
// Every scenario prints one line with what it generated, for tests to compare with a trace:
//   fake-app: pid=.. scenario=.. kernels=.. memcpys=.. ... launches=..
#include <cupti.h>  // also the runtime/driver parameter structs (cudaLaunchKernel_v7000_params)
#include <dlfcn.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fake_cupti/fake_cupti.h"
#include "fake_nccl.h"
#ifdef FAKE_APP_CHAIN
#define GP_CHAIN_NS chain_nofp
#include "unwind/chain.h"
#endif

namespace {

// What this process generated, printed by ReportCounts().
struct Counts {
  std::atomic<uint64_t> kernels{0}, memcpys{0}, memsets{0}, syncs{0}, memory{0}, markers{0},
      runtime_api{0}, driver_api{0}, launches{0}, graph_launches{0}, incomplete{0}, dropped{0};
  // GPU and wait time generated (the live scenario prints them). sync_call_ns: the whole
  // host-wait calls as the app saw them, the recorder's callbacks included: whatever a
  // recorder measures of a wait lies between sync_ns and this, however busy the machine.
  std::atomic<uint64_t> kernel_ns{0}, copy_ns{0}, set_ns{0}, sync_ns{0}, sync_call_ns{0};
};
Counts g_counts;
const char* g_scenario = "";
uint32_t g_context = 0;
CUstream g_stream = nullptr;
constexpr uint32_t kStreamId = 13;
uint32_t g_device = 0;  // the GPU this process uses (LOCAL_RANK in the ranks scenario)

void ReportCounts(int threads = 1) {
  printf(
      "fake-app: pid=%d scenario=%s kernels=%llu memcpys=%llu memsets=%llu syncs=%llu "
      "memory=%llu markers=%llu runtime_api=%llu driver_api=%llu api=%llu launches=%llu "
      "graph_launches=%llu incomplete=%llu dropped=%llu threads=%d\n",
      static_cast<int>(getpid()), g_scenario, (unsigned long long)g_counts.kernels.load(),
      (unsigned long long)g_counts.memcpys.load(), (unsigned long long)g_counts.memsets.load(),
      (unsigned long long)g_counts.syncs.load(), (unsigned long long)g_counts.memory.load(),
      (unsigned long long)g_counts.markers.load(), (unsigned long long)g_counts.runtime_api.load(),
      (unsigned long long)g_counts.driver_api.load(),
      (unsigned long long)(g_counts.runtime_api.load() + g_counts.driver_api.load()),
      (unsigned long long)g_counts.launches.load(),
      (unsigned long long)g_counts.graph_launches.load(),
      (unsigned long long)g_counts.incomplete.load(), (unsigned long long)g_counts.dropped.load(),
      threads);
  fflush(stdout);
}

// ---- the parts of libcuda/libcudart the scenarios use ----

// GPU time: work on the stream starts after the API call and after the previous work ends.
std::atomic<uint64_t> g_gpu_busy_until{0};
// A queue end more than this far ahead of the clock was read on another clock: a tool
// registered its own timestamp callback since (as CUPTI allows at any time; gpuperf attach
// does), and the fake's clock follows it. The queue then starts again from now.
constexpr uint64_t kClockChangedNs = 10'000'000'000ull;

void GpuInterval(uint64_t duration_ns, uint64_t* start, uint64_t* end) {
  uint64_t now = fake_cupti_now();
  uint64_t prev = g_gpu_busy_until.load();
  uint64_t begin;
  do {
    const uint64_t queued = prev > now && prev - now < kClockChangedNs ? prev : now;
    begin = queued + 800;
  } while (!g_gpu_busy_until.compare_exchange_weak(prev, begin + duration_ns));
  *start = begin;
  *end = begin + duration_ns;
}

uint32_t Enter(FakeCuptiApiFrame* frame, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
               const char* symbol = nullptr, const void* params = nullptr) {
  (domain == CUPTI_CB_DOMAIN_RUNTIME_API ? g_counts.runtime_api : g_counts.driver_api)++;
  return fake_cupti_api_enter(frame, domain, cbid, symbol, params);
}

void EmitKernel(uint32_t correlation_id, const char* name, uint32_t graph_id = 0,
                uint64_t graph_node_id = 0, bool incomplete = false) {
  FakeCuptiKernel kernel{};
  kernel.correlation_id = correlation_id;
  kernel.name = name;
  kernel.device_id = g_device;
  kernel.context_id = g_context;
  kernel.stream_id = kStreamId;
  GpuInterval(2000 + (correlation_id % 7) * 300, &kernel.start, &kernel.end);
  kernel.graph_id = graph_id;
  kernel.graph_node_id = graph_node_id;
  kernel.grid_x = 256;
  kernel.grid_y = kernel.grid_z = 1;
  kernel.block_x = 128;
  kernel.block_y = kernel.block_z = 1;
  kernel.registers_per_thread = 32;
  kernel.incomplete = incomplete ? 1 : 0;
  fake_cupti_emit_kernel(&kernel);
  g_counts.kernels++;
  g_counts.kernel_ns += kernel.end - kernel.start;
  if (incomplete) g_counts.incomplete++;
}

// cudaLaunchKernel; with `nested`, the runtime call makes a cuLaunchKernel driver call, and the
// kernel carries the driver call's correlation id (the innermost launching API).
// Real CUPTI decides inside the launch call whether its kernel is recorded; the scenarios
// emit the record after the call returns, unless this is set (attach_target: a window that
// opens between a call's return and its record would otherwise get a kernel whose call it
// never saw, which real CUDA cannot give).
bool g_emit_inside_call = false;

uint32_t LaunchKernel(const char* name, bool nested = false, bool incomplete = false) {
  static int fake_function;
  cudaLaunchKernel_v7000_params params{};
  params.func = &fake_function;
  params.gridDim = dim3(256);
  params.blockDim = dim3(128);
  params.stream = reinterpret_cast<cudaStream_t>(g_stream);
  FakeCuptiApiFrame runtime;
  uint32_t correlation_id = Enter(&runtime, CUPTI_CB_DOMAIN_RUNTIME_API,
                                  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, name, &params);
  if (nested) {
    cuLaunchKernel_params driver_params{};
    driver_params.gridDimX = 256;
    driver_params.blockDimX = 128;
    driver_params.hStream = g_stream;
    FakeCuptiApiFrame driver;
    correlation_id = Enter(&driver, CUPTI_CB_DOMAIN_DRIVER_API,
                           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, name, &driver_params);
    if (g_emit_inside_call) EmitKernel(correlation_id, name, 0, 0, incomplete);
    fake_cupti_api_exit(&driver, CUDA_SUCCESS);
  } else if (g_emit_inside_call) {
    EmitKernel(correlation_id, name, 0, 0, incomplete);
  }
  fake_cupti_api_exit(&runtime, cudaSuccess);
  g_counts.launches++;
  if (!g_emit_inside_call) EmitKernel(correlation_id, name, 0, 0, incomplete);
  return correlation_id;
}

// cudaMemcpy (runtime) nesting cuMemcpyHtoD_v2/DtoH_v2 (driver), as cudart does.
void Memcpy(uint64_t bytes, bool to_device) {
  FakeCuptiApiFrame runtime, driver;
  uint32_t runtime_id =
      Enter(&runtime, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020);
  uint32_t driver_id = Enter(&driver, CUPTI_CB_DOMAIN_DRIVER_API,
                             to_device ? CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2
                                       : CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2);
  FakeCuptiMemcpy copy{};
  copy.correlation_id = driver_id;
  copy.runtime_correlation_id = runtime_id;
  copy.copy_kind = to_device ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  copy.src_kind =
      to_device ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  copy.dst_kind =
      to_device ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  copy.bytes = bytes;
  GpuInterval(bytes / 20 + 1000, &copy.start, &copy.end);  // ~20 GB/s
  copy.device_id = g_device;
  copy.context_id = g_context;
  copy.stream_id = kStreamId;
  fake_cupti_api_exit(&driver, CUDA_SUCCESS);
  fake_cupti_api_exit(&runtime, cudaSuccess);
  fake_cupti_emit_memcpy(&copy);
  g_counts.memcpys++;
  g_counts.copy_ns += copy.end - copy.start;
}

void Memset(uint64_t bytes) {
  FakeCuptiApiFrame runtime, driver;
  Enter(&runtime, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020);
  uint32_t driver_id =
      Enter(&driver, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2);
  FakeCuptiMemset set{};
  set.correlation_id = driver_id;
  set.bytes = bytes;
  GpuInterval(bytes / 100 + 800, &set.start, &set.end);
  set.device_id = g_device;
  set.context_id = g_context;
  set.stream_id = kStreamId;
  set.memory_kind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  fake_cupti_api_exit(&driver, CUDA_SUCCESS);
  fake_cupti_api_exit(&runtime, cudaSuccess);
  fake_cupti_emit_memset(&set);
  g_counts.memsets++;
  g_counts.set_ns += set.end - set.start;
}

// The end of a host wait that began at `start`: once the GPU's queued work is done (at least
// 100 ns later). As the real calls do, the fake ones return only then: the host call spans the
// wait, so a recorder that times the call sees the wait CUPTI's record says.
uint64_t WaitForGpu(uint64_t start) {
  const uint64_t busy = g_gpu_busy_until.load();
  const uint64_t end = busy > start && busy - start < kClockChangedNs ? busy : start + 100;
  for (uint64_t now = start; now < end; now = fake_cupti_now()) {
    // The clock changed meanwhile (a client registered its own timestamps, or finalized CUPTI
    // and took them away): the wait is over.
    if (now < start || end - now > kClockChangedNs) break;
    if (end - now > 200000)
      std::this_thread::sleep_for(std::chrono::nanoseconds(end - now - 100000));
  }
  g_counts.syncs++;
  g_counts.sync_ns += end - start;
  return end;
}

void DeviceSynchronize() {
  FakeCuptiApiFrame runtime;
  const uint64_t call_start = fake_cupti_now();
  uint32_t id = Enter(&runtime, CUPTI_CB_DOMAIN_RUNTIME_API,
                      CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020);
  const uint64_t start = fake_cupti_now();
  const uint64_t end = WaitForGpu(start);
  fake_cupti_sync_event(CUPTI_CBID_SYNCHRONIZE_CONTEXT_SYNCHRONIZED, g_context, nullptr);
  fake_cupti_api_exit(&runtime, cudaSuccess);
  g_counts.sync_call_ns += fake_cupti_now() - call_start;
  fake_cupti_emit_sync(id, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, g_context,
                       kStreamId, start, end);
}

// cudaStreamSynchronize on the app's stream.
void StreamSynchronize() {
  FakeCuptiApiFrame runtime;
  const uint64_t call_start = fake_cupti_now();
  cudaStreamSynchronize_v3020_params params{};
  params.stream = reinterpret_cast<cudaStream_t>(g_stream);
  uint32_t id = Enter(&runtime, CUPTI_CB_DOMAIN_RUNTIME_API,
                      CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, nullptr, &params);
  const uint64_t start = fake_cupti_now();
  const uint64_t end = WaitForGpu(start);
  fake_cupti_api_exit(&runtime, cudaSuccess);
  g_counts.sync_call_ns += fake_cupti_now() - call_start;
  fake_cupti_emit_sync(id, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, g_context,
                       kStreamId, start, end);
}

// cudaStreamWaitEvent: the app's stream waits for an event; the CPU does not.
void StreamWaitEvent() {
  FakeCuptiApiFrame runtime;
  cudaStreamWaitEvent_v3020_params params{};
  params.stream = reinterpret_cast<cudaStream_t>(g_stream);
  uint32_t id = Enter(&runtime, CUPTI_CB_DOMAIN_RUNTIME_API,
                      CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, nullptr, &params);
  const uint64_t start = fake_cupti_now();
  fake_cupti_api_exit(&runtime, cudaSuccess);
  fake_cupti_emit_sync(id, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, g_context,
                       kStreamId, start, fake_cupti_now());
}

uint64_t Malloc(uint64_t bytes) {
  static std::atomic<uint64_t> next_address{0x7f0000000000ull};
  uint64_t address = next_address.fetch_add((bytes + 0xfff) & ~0xfffull);
  FakeCuptiApiFrame runtime, driver;
  uint32_t id =
      Enter(&runtime, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
  Enter(&driver, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2);
  fake_cupti_api_exit(&driver, CUDA_SUCCESS);
  fake_cupti_api_exit(&runtime, cudaSuccess);
  fake_cupti_emit_memory(id, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, address, bytes, g_device, g_context,
                         fake_cupti_now());
  g_counts.memory++;
  return address;
}

void Free(uint64_t address, uint64_t bytes) {
  FakeCuptiApiFrame runtime, driver;
  uint32_t id =
      Enter(&runtime, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020);
  Enter(&driver, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2);
  fake_cupti_api_exit(&driver, CUDA_SUCCESS);
  fake_cupti_api_exit(&runtime, cudaSuccess);
  fake_cupti_emit_memory(id, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE,
                         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, address, bytes, g_device, g_context,
                         fake_cupti_now());
  g_counts.memory++;
}

// cudaGraphLaunch of a 3-kernel graph. The graph's work carries the correlation id of the
// cuGraphLaunch driver call it nests. With GRAPH_TRACE enabled, CUPTI reports the graph as one
// CUpti_ActivityGraphTrace2 instead of its nodes.
void GraphLaunch(uint32_t graph_id) {
  static const char* kNodes[] = {"_Z6gemm_aPfS_", "_Z7softmaxPf", "_Z9layernormPfS_"};
  FakeCuptiApiFrame runtime, driver;
  Enter(&runtime, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000);
  uint32_t id = Enter(&driver, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch);
  fake_cupti_api_exit(&driver, CUDA_SUCCESS);
  fake_cupti_api_exit(&runtime, cudaSuccess);
  g_counts.launches++;
  g_counts.graph_launches++;
  if (fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_GRAPH_TRACE, g_context)) {
    uint64_t start, end;
    GpuInterval(9000, &start, &end);
    fake_cupti_emit_graph_trace(id, graph_id, g_device, g_context, kStreamId, start, end);
    return;
  }
  for (uint64_t node = 0; node < 3; ++node) {
    EmitKernel(id, kNodes[node], graph_id, (uint64_t{graph_id} << 32) | (node + 1));
  }
}

void Marker(CUpti_ActivityFlag flags, uint32_t id, const char* name) {
  fake_cupti_emit_marker(flags, id, name, "fake-app", fake_cupti_now());
  g_counts.markers++;
}

// What cuInit does before and after the injection: load it once, then report the device and
// create the primary context (device/context records, resource callback).
void CudaInit() {
  // FAKE_APP_LIBCUDA: a stand-in libcuda.so.1 (tests/fakes/fake_libcuda.cc), mapped as the
  // runtime maps the driver, so that from outside the process looks like a CUDA program
  // (gpuperf attach looks for libcuda in its mappings).
  if (const char* cuda = getenv("FAKE_APP_LIBCUDA"); cuda != nullptr && *cuda != '\0') {
    if (dlopen(cuda, RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      fprintf(stderr, "fake-app: cannot load %s: %s\n", cuda, dlerror());
    }
  }
  if (const char* path = getenv("CUDA_INJECTION64_PATH"); path != nullptr && *path != '\0') {
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      fprintf(stderr, "fake-app: cannot load injection library: %s\n", dlerror());
    } else if (auto init = reinterpret_cast<int (*)()>(dlsym(handle, "InitializeInjection"))) {
      int ok = init();
      if (ok == 0) fprintf(stderr, "fake-app: InitializeInjection returned 0\n");
    } else {
      fprintf(stderr, "fake-app: %s has no InitializeInjection\n", path);
    }
  }
  fake_cupti_cu_init_finished();
  fake_cupti_emit_device(g_device, "NVIDIA H100 80GB HBM3 (fake)");
  g_context = fake_cupti_create_context(g_device);
  g_stream = fake_cupti_create_stream(g_context, kStreamId);
}

// ---- scenarios ----

int ArgOr(int argc, char** argv, int index, int fallback) {
  return argc > index ? atoi(argv[index]) : fallback;
}

void BasicWorkload() {
  uint64_t bytes = 1 << 20;
  uint64_t a = Malloc(bytes);
  Memcpy(bytes, /*to_device=*/true);
  cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 4242);
  LaunchKernel("_Z6vecAddPKfS0_Pfi");
  cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, nullptr);
  for (int i = 0; i < 4; ++i) LaunchKernel(i % 2 ? "_Z5scalePfi" : "_Z6vecAddPKfS0_Pfi");
  Memset(bytes);
  Memcpy(bytes, /*to_device=*/false);
  DeviceSynchronize();
  Free(a, bytes);
}

int Basic(int, char**) {
  BasicWorkload();
  ReportCounts();
  return 0;
}

int Threads(int argc, char** argv) {
  int threads = ArgOr(argc, argv, 2, 4);
  int launches = ArgOr(argc, argv, 3, 1000);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([launches, t] {
      std::string name = "_Z6workerILi" + std::to_string(t) + "EEvv";
      for (int i = 0; i < launches; ++i) LaunchKernel(name.c_str(), /*nested=*/i % 3 == 0);
    });
  }
  for (auto& worker : workers) worker.join();
  DeviceSynchronize();
  ReportCounts(threads);
  return 0;
}

int Nested(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 100);
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z11nestedKernv", /*nested=*/true);
  ReportCounts();
  return 0;
}

// What cuBLAS and Triton do: driver launches with no runtime call around them. Between
// launches, the getter libraries call constantly (cudaGetDevice); at the end, a failing
// cudaMalloc (cudaErrorMemoryAllocation).
int DriverApi(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 10);
  for (int i = 0; i < launches; ++i) {
    cuLaunchKernel_params params{};
    params.gridDimX = 64;
    params.blockDimX = 256;
    params.hStream = g_stream;
    FakeCuptiApiFrame driver;
    uint32_t id = Enter(&driver, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                        "triton_mm_kernel", &params);
    fake_cupti_api_exit(&driver, CUDA_SUCCESS);
    g_counts.launches++;
    EmitKernel(id, "triton_mm_kernel");
    FakeCuptiApiFrame getter;
    Enter(&getter, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020);
    fake_cupti_api_exit(&getter, cudaSuccess);
  }
  FakeCuptiApiFrame failing;
  Enter(&failing, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
  fake_cupti_api_exit(&failing, cudaErrorMemoryAllocation);
  ReportCounts();
  return 0;
}

int Graph(int, char**) {
  GraphLaunch(/*graph_id=*/1);
  GraphLaunch(/*graph_id=*/1);
  DeviceSynchronize();
  ReportCounts();
  return 0;
}

int Drops(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 100);
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z4workv");
  fake_cupti_drop_records(7);
  g_counts.dropped += 7;
  LaunchKernel("_Z10unfinishedv", false, /*incomplete=*/true);
  ReportCounts();
  return 0;
}

int ExitFlush(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 500);
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z7pendingv");
  ReportCounts();
  return 0;  // records still sit in a partly filled buffer: the injection's exit flush
}

int Signal(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 300);
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z9preSignalv");
  ReportCounts();
  kill(getpid(), SIGTERM);
  // Without a handler the process dies here. With one, the injection flushes and re-raises;
  // an injection that swallows SIGTERM leaves us to notice.
  for (int i = 0; i < 100; ++i) usleep(100 * 1000);
  fprintf(stderr, "fake-app: still alive 10 s after SIGTERM\n");
  return 99;
}

// Replaces this process with `fake_cuda_app basic`; returns only if exec failed.
void ExecBasic(char* argv0) {
  char self[] = "/proc/self/exe";
  char scenario[] = "basic";
  char* child_argv[] = {argv0, scenario, nullptr};
  execv(self, child_argv);
}

int Fork(int argc, char** argv) {
  for (int i = 0; i < 50; ++i) LaunchKernel("_Z10beforeForkv");
  fflush(stdout);
  pid_t plain = fork();
  if (plain == 0) {
    // A child that never touches CUDA and leaves through exit(): the atexit handlers it
    // inherited run here, and must not flush the parent's records a second time.
    g_scenario = "fork-child";
    g_counts.kernels = g_counts.launches = g_counts.runtime_api = g_counts.driver_api = 0;
    ReportCounts();
    exit(0);
  }
  pid_t exec_child = fork();
  if (exec_child == 0) {
    ExecBasic(argv[0]);
    _exit(127);
  }
  for (int i = 0; i < 50; ++i) LaunchKernel("_Z9afterForkv");
  int status = 0, failures = 0;
  for (pid_t child : {plain, exec_child}) {
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "fake-app: child %d failed (status %d)\n", static_cast<int>(child), status);
      failures++;
    }
  }
  ReportCounts();
  return failures == 0 ? 0 : 1;
}

// A child forked after CUDA started (no exec, no CUDA) that outlives its parent: it waits
// for $FAKE_APP_RELEASE (60 s at most), then leaves through exit(). The parent launches M,
// forks, launches M more and exits at once. Its trace is finished when it exits, whatever
// the child copied (tests/e2e/trace_lock_test.sh).
int ForkLinger(int argc, char** argv) {
  const int launches = ArgOr(argc, argv, 2, 50);
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z10beforeForkv");
  fflush(stdout);
  if (fork() == 0) {
    g_scenario = "fork_linger-child";
    g_counts.kernels = g_counts.launches = g_counts.runtime_api = g_counts.driver_api = 0;
    ReportCounts();
    const char* release = getenv("FAKE_APP_RELEASE");
    for (int waited = 0; release != nullptr && access(release, F_OK) != 0; ++waited) {
      if (waited == 6000) break;  // 60 s: the test is gone
      usleep(10 * 1000);
    }
    exit(0);
  }
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z9afterForkv");
  ReportCounts();
  return 0;
}

int SecondSubscriber(int, char**) {
  BasicWorkload();
  ReportCounts();
  return 0;
}

int DeviceReset(int, char**) {
  BasicWorkload();
  FakeCuptiApiFrame reset;
  Enter(&reset, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
  fake_cupti_destroy_context(g_context);
  fake_cupti_api_exit(&reset, cudaSuccess);
  // The next runtime call creates a new primary context.
  g_context = fake_cupti_create_context(g_device);
  g_stream = fake_cupti_create_stream(g_context, kStreamId);
  for (int i = 0; i < 5; ++i) LaunchKernel("_Z10afterResetv");
  ReportCounts();
  return 0;
}

int OsExit(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 1000);
  int wait_ms = ArgOr(argc, argv, 3, 600);
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z6beforev");
  std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  for (int i = 0; i < 10; ++i) LaunchKernel("_Z9lastBurstv");
  ReportCounts();
  printf("fake-app: settled_launches=%d (launched more than %d ms before _exit)\n", launches,
         wait_ms);
  fflush(stdout);
  _exit(0);  // no atexit handlers, no destructors
}

// For the capture range's test (tests/e2e/capture_range_test.sh): M launches at once, a
// pause of WAIT_MS (the range ends and gpuperf detaches CUPTI meanwhile), M more, a normal exit.
int Window(int argc, char** argv) {
  const int launches = ArgOr(argc, argv, 2, 50);
  const int wait_ms = ArgOr(argc, argv, 3, 2000);
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z6insidev");
  std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z7outsidev");
  ReportCounts();
  return 0;
}

int Nvtx(int, char**) {
  uint32_t next_id = 1;
  for (int step = 0; step < 3; ++step) {
    uint32_t outer = next_id++;
    Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, outer, "train_step");
    uint32_t inner = next_id++;
    Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, inner, "forward");
    LaunchKernel("_Z7forwardv");
    Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, inner, nullptr);
    Marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, next_id++, "checkpoint");
    LaunchKernel("_Z8backwardv");
    Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, outer, nullptr);
  }
  ReportCounts();
  return 0;
}

// The launching thread's CPU time, ns: unlike the wall clock, the machine's other load does
// not count (what gpuperf adds to a launch runs on this thread, in the callbacks).
uint64_t ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

// For `gpuperf metrics`: kernels whose names give the fake's counters a memory-bound, a
// compute-bound and a latency-bound profile (fake_cupti/hw_control.cc), the first step inside
// an NVTX range with a nested one, a graph launch (never measured per kernel), then M rounds.
int Metrics(int argc, char** argv) {
  const int rounds = ArgOr(argc, argv, 2, 2);
  const char* kKernels[] = {"_Z11copy_kernelPK6float4PS_m", "_Z10fma_kernelPfi",
                            "_Z14latency_kernelPKjPji"};
  fake_cupti_nvtx_push("step");
  Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, "step");
  fake_cupti_nvtx_push("inner");
  LaunchKernel(kKernels[0], /*nested=*/true);
  fake_cupti_nvtx_pop();
  LaunchKernel(kKernels[1]);
  fake_cupti_nvtx_pop();
  Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, nullptr);
  GraphLaunch(7);
  for (int r = 0; r < rounds; ++r) {
    for (const char* kernel : kKernels) LaunchKernel(kernel, /*nested=*/r % 2 == 1);
  }
  DeviceSynchronize();
  ReportCounts();
  return 0;
}

// For `gpuperf record --pc-sampling`: loads CUBIN as a module of the context, launches
// FUNCTION, and queues the samples given as OFFSET:STALL_INDEX:COUNT (the fake's stall indexes
// are 2, 5, 9); half before and half after a pause of two flush periods, so that both the
// periodic collection and the one at exit deliver some.
int PcSampling(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "fake-app: pc_sampling CUBIN FUNCTION [OFFSET:STALL:COUNT...]\n");
    return 2;
  }
  FILE* file = fopen(argv[2], "rb");
  if (file == nullptr) {
    fprintf(stderr, "fake-app: cannot open %s\n", argv[2]);
    return 2;
  }
  std::vector<char> cubin;
  char chunk[4096];
  for (size_t n; (n = fread(chunk, 1, sizeof(chunk), file)) > 0;)
    cubin.insert(cubin.end(), chunk, chunk + n);
  fclose(file);
  const uint64_t crc = fake_cupti_load_module(g_context, cubin.data(), cubin.size());
  const char* function = argv[3];
  uint64_t samples = 0;
  for (int i = 4; i < argc; ++i) {
    if (i == 4 + (argc - 4) / 2) {
      LaunchKernel(function);
      std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    }
    unsigned long long offset = 0;
    unsigned stall = 0, count = 0;
    if (sscanf(argv[i], "%llx:%u:%u", &offset, &stall, &count) != 3) {
      fprintf(stderr, "fake-app: bad sample '%s'\n", argv[i]);
      return 2;
    }
    if (fake_cupti_pc_sample(g_context, crc, function, offset, stall, count)) samples += count;
  }
  LaunchKernel(function);
  DeviceSynchronize();
  ReportCounts();
  printf("fake-app: cubin_crc=%016llx pc_samples=%llu\n", (unsigned long long)crc,
         (unsigned long long)samples);
  fflush(stdout);
  return 0;
}

int Many(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 200000);
  const auto start = std::chrono::steady_clock::now();
  const uint64_t cpu_start = ThreadCpuNs();
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z4tinyv");
  const uint64_t cpu_ns = ThreadCpuNs() - cpu_start;
  const auto loop_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  DeviceSynchronize();
  ReportCounts();
  printf("fake-app-timing: ns_per_launch=%.1f cpu_ns_per_launch=%.1f\n",
         static_cast<double>(loop_ns) / launches, static_cast<double>(cpu_ns) / launches);
  fflush(stdout);
  return 0;
}

#ifdef FAKE_APP_CHAIN
// Launches from the bottom of a call chain through three shared libraries built without
// frame pointers (tests/unwind/chain.h): stacks only .eh_frame tables or libunwind can
// unwind. Every fourth chain realigns the stack; every fourth another keeps a frame's CFA in
// R12, which only libunwind follows. A first launch from a thread of its own, then a pause,
// gives the profiler's tables time to be built before the others.
int LaunchFromChainBottom(void* name) {
  LaunchKernel(static_cast<const char*>(name));
  return 1;
}

void LaunchThroughChain(int i) {
  chain_nofp::ChainContext context;
  context.leaf = LaunchFromChainBottom;
  context.arg = const_cast<char*>(i % 2 ? "_Z9chainEvenv" : "_Z8chainOddv");
  context.realign = i % 4 == 1;
  context.other_register = i % 4 == 3;
  chain_nofp::Run(i % 7, &context);
}

int Chain(int argc, char** argv) {
  const int threads = ArgOr(argc, argv, 2, 4);
  const int launches = ArgOr(argc, argv, 3, 300);
  const int pause_ms = ArgOr(argc, argv, 4, 0);
  std::thread([] { LaunchThroughChain(0); }).join();
  std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([launches] {
      for (int i = 0; i < launches; ++i) LaunchThroughChain(i);
    });
  }
  for (auto& worker : workers) worker.join();
  DeviceSynchronize();
  ReportCounts(threads);
  return 0;
}
#endif

// VmRSS of this process, KiB.
long RssKb() {
  FILE* status = fopen("/proc/self/status", "r");
  if (status == nullptr) return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof(line), status) != nullptr) {
    if (sscanf(line, "VmRSS: %ld kB", &kb) == 1) break;
  }
  fclose(status);
  return kb;
}

// Short-lived launching threads, 8 at a time, as a thread pool that never reuses its threads
// would make them. RSS is taken once the first tenth has come and gone (the allocator, the
// fake's and the injection's steady state) and at the end. Gives up, failing, once RSS has
// grown by GiveUpKb: a recorder that keeps what exited threads left would otherwise take
// the machine's memory.
int Churn(int argc, char** argv) {
  constexpr long kGiveUpKb = 512 * 1024;
  int threads = ArgOr(argc, argv, 2, 10000);
  int launches = ArgOr(argc, argv, 3, 2);
  long rss_warm = -1;
  int started = 0;
  bool gave_up = false;
  while (started < threads && !gave_up) {
    std::vector<std::thread> wave;
    for (int i = 0; i < 8 && started < threads; ++i, ++started) {
      wave.emplace_back([launches] {
        for (int k = 0; k < launches; ++k) LaunchKernel("_Z9shortLivedv");
      });
    }
    for (auto& thread : wave) thread.join();
    if (rss_warm < 0 && started >= threads / 10) rss_warm = RssKb();
    gave_up = rss_warm >= 0 && RssKb() - rss_warm > kGiveUpKb;
  }
  DeviceSynchronize();
  // Give the writer a moment to free what the last threads left before measuring.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ReportCounts(started);
  printf("fake-app: churn threads_started=%d rss_warm_kb=%ld rss_end_kb=%ld gave_up=%d\n", started,
         rss_warm, RssKb(), gave_up ? 1 : 0);
  fflush(stdout);
  return gave_up ? 1 : 0;
}

// Killed without warning (SIGKILL, the OOM killer) after a flush period has passed: what the
// last periodic flush wrote is all that is left.
int SelfKill(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 300);
  int wait_ms = ArgOr(argc, argv, 3, 700);
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z10beforeKillv");
  std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  ReportCounts();
  kill(getpid(), SIGKILL);
  pause();
  return 99;
}

// An uncaught C++ exception: std::terminate, then abort() (SIGABRT).
int Abort(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 300);
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z11beforeAbortv");
  ReportCounts();
  std::thread([] { throw std::runtime_error("fake-app: uncaught on purpose"); }).join();
  return 99;
}

// fork() before CUDA is initialized, then both processes use CUDA: two recorded processes.
int ForkThenCuda(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 20);
  fflush(stdout);
  pid_t child = fork();
  if (child == 0) g_scenario = "fork_then_cuda-child";
  CudaInit();
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z13afterForkInitv");
  DeviceSynchronize();
  ReportCounts();
  if (child == 0) return 0;
  int status = 0;
  return waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0
                                                                                              : 1;
}

// exec() after using CUDA: the old image leaves without exit handlers, the new one (same
// pid, same program) records afresh.
int ExecAfterCuda(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 50);
  int wait_ms = ArgOr(argc, argv, 3, 700);
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z10beforeExecv");
  std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  ReportCounts();
  ExecBasic(argv[0]);
  return 127;
}

// What torch.profiler (Kineto) does when it starts inside a process gpuperf already records:
// subscribe (refused: the slot is taken) and register its own activity buffers, which
// replaces the injection's. Launches go on for a while after that.
uint64_t g_late_records = 0;
void CUPTIAPI LateRequest(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 1 << 20;
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, *size));
  *max_records = 0;
}
void CUPTIAPI LateComplete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) g_late_records++;
  free(buffer);
}
void CUPTIAPI LateCallback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

int LateProfiler(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 4000);
  int spread_ms = ArgOr(argc, argv, 3, 800);
  for (int i = 0; i < launches / 2; ++i) LaunchKernel("_Z12beforeKinetov");
  CUpti_SubscriberHandle handle = nullptr;
  CUptiResult subscribed = cuptiSubscribe(&handle, LateCallback, nullptr);
  const char* subscribe_text = "?";
  cuptiGetResultString(subscribed, &subscribe_text);
  cuptiActivityRegisterCallbacks(LateRequest, LateComplete);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const int batches = 20;
  for (int b = 0; b < batches; ++b) {
    for (int i = 0; i < launches / 2 / batches; ++i) LaunchKernel("_Z11afterKinetov");
    std::this_thread::sleep_for(std::chrono::milliseconds(spread_ms / batches));
  }
  ReportCounts();
  cuptiActivityFlushAll(0);
  printf("fake-app: late_profiler subscribe=%s its_records=%llu\n", subscribe_text,
         (unsigned long long)g_late_records);
  fflush(stdout);
  return 0;
}

// torch.profiler (Kineto) refused CUPTI, as seen on the H100 with PyTorch 2.11: each profiling
// session subscribes; when refused it says so and gives up on CUDA (no buffers registered), so
// the recorder keeps every launch. With HOLD=1 the program's own client takes the slot first
// (after CUDA starts), so the sessions are refused by it, not by gpuperf.
int KinetoRefused(int argc, char** argv) {
  int launches = ArgOr(argc, argv, 2, 400);
  int sessions = ArgOr(argc, argv, 3, 2);
  bool hold = ArgOr(argc, argv, 4, 0) != 0;
  for (int i = 0; i < launches / 2; ++i) LaunchKernel("_Z12beforeKinetov");
  CUpti_SubscriberHandle own = nullptr;
  if (hold) {
    CUptiResult held = cuptiSubscribe(&own, LateCallback, nullptr);
    const char* text = "?";
    cuptiGetResultString(held, &text);
    printf("fake-app: kineto own_client=%s\n", text);
  }
  for (int session = 1; session <= sessions; ++session) {
    CUpti_SubscriberHandle handle = nullptr;
    CUptiResult subscribed = cuptiSubscribe(&handle, LateCallback, nullptr);
    const char* text = "?";
    cuptiGetResultString(subscribed, &text);
    printf("fake-app: kineto session=%d subscribe=%s\n", session, text);
    for (int i = 0; i < launches / 2 / sessions; ++i) LaunchKernel("_Z11duringKinetov");
    if (subscribed == CUPTI_SUCCESS) cuptiUnsubscribe(handle);
  }
  if (own != nullptr) cuptiUnsubscribe(own);
  ReportCounts();
  return 0;
}

// Waits: M rounds of two launches, a stream synchronize, a stream's wait on an event, a launch
// and a device synchronize.
int Syncs(int argc, char** argv) {
  const int rounds = ArgOr(argc, argv, 2, 20);
  for (int i = 0; i < rounds; ++i) {
    LaunchKernel("_Z6vecAddPKfS0_Pfi");
    LaunchKernel("_Z5scalePfi");
    StreamSynchronize();
    StreamWaitEvent();
    LaunchKernel("_Z5scalePfi");
    DeviceSynchronize();
  }
  ReportCounts();
  return 0;
}

// The benchmark hook's detached level (gpuperf_bench_toggle(-2), decode_overhead.py's in-process
// torch.profiler levels): M launches recorded; CUPTI detached, a Kineto-like client subscribes
// and M launches go by; attaching again while that client holds the slot fails; level -3
// finalizes CUPTI with the client's subscriber (torch.profiler keeps its own after a session),
// gpuperf attaches again and records M more.
int BenchDetach(int argc, char** argv) {
  const int launches = ArgOr(argc, argv, 2, 100);
  const char* path = getenv("CUDA_INJECTION64_PATH");  // loaded by main's CudaInit
  void* library = path != nullptr ? dlopen(path, RTLD_NOLOAD | RTLD_LAZY) : nullptr;
  using Toggle = int (*)(int);
  auto toggle = library != nullptr
                    ? reinterpret_cast<Toggle>(dlsym(library, "gpuperf_bench_toggle"))
                    : nullptr;
  if (toggle == nullptr) {
    fprintf(stderr, "fake-app: no gpuperf_bench_toggle in CUDA_INJECTION64_PATH\n");
    return 1;
  }
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z8attachedv");
  printf("fake-app: unknown_level=%d\n", toggle(-50));
  printf("fake-app: detach=%d\n", toggle(-2));
  CUpti_SubscriberHandle other = nullptr;
  const CUptiResult subscribed = cuptiSubscribe(&other, LateCallback, nullptr);
  const char* text = "?";
  cuptiGetResultString(subscribed, &text);
  printf("fake-app: other_client=%s\n", text);
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z8detachedv");
  printf("fake-app: attach_while_held=%d\n", toggle(1));
  printf("fake-app: finalize=%d\n", toggle(-3));
  printf("fake-app: attach=%d\n", toggle(1));
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z10reattachedv");
  // The diagnostic levels: no callback at all (-4), then a bare subscriber (-5), which holds
  // the slot, then the recording again.
  printf("fake-app: no_callbacks=%d\n", toggle(-4));
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z6nocallv");
  printf("fake-app: subscriber_only=%d\n", toggle(-5));
  CUpti_SubscriberHandle refused = nullptr;
  cuptiGetResultString(cuptiSubscribe(&refused, LateCallback, nullptr), &text);
  printf("fake-app: other_beside_subscriber=%s\n", text);
  printf("fake-app: attach_after_subscriber=%d\n", toggle(1));
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z4lastv");
  // The recording without copy records (-200 - 1), attached afresh: kernels still recorded.
  printf("fake-app: without_copies=%d\n", toggle(-201));
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z7withoutv");
  // Level 7: the callbacks are called and return at once (kernels recorded, no links);
  // level 8: no driver-API callbacks (runtime launches keep their links).
  printf("fake-app: idle_callbacks=%d\n", toggle(7));
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z4idlev", /*nested=*/true);
  printf("fake-app: no_driver=%d\n", toggle(8));
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z8nodriverv", /*nested=*/true);
  printf("fake-app: no_autograd=%d\n", toggle(9));  // no libtorch here: the recording as is
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z10noautogradv");
  printf("fake-app: back=%d\n", toggle(1));
  ReportCounts();
  return 0;
}

// For the flight recorder's test (tests/e2e/flight_recorder_test.sh): phases of launches
// of known counts, each phase's kernels named _Z6phaseKv. After phase K the app says so and
// waits for FAKE_APP_GO_DIR/go-K, so that the test can ask for a dump and let time pass.
// "40E" ends its phase with a failing cudaMalloc. The app's own SIGUSR2 handler, installed
// before CUDA starts (and so before the injection's), counts the signals it gets.
volatile sig_atomic_t g_usr2_calls = 0;
int Flight(int argc, char** argv) {
  signal(SIGUSR2, [](int) { g_usr2_calls = g_usr2_calls + 1; });
  CudaInit();
  const char* go_dir = getenv("FAKE_APP_GO_DIR");
  for (int phase = 1; phase + 1 < argc; ++phase) {
    const std::string spec = argv[phase + 1];
    const int launches = atoi(spec.c_str());
    const std::string name = "_Z6phase" + std::to_string(phase) + "v";
    for (int i = 0; i < launches; ++i) LaunchKernel(name.c_str());
    if (spec.back() == 'E') {
      FakeCuptiApiFrame failing;
      Enter(&failing, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
      fake_cupti_api_exit(&failing, cudaErrorMemoryAllocation);
    }
    printf("fake-app: phase %d done launches=%d pid=%d\n", phase, launches,
           static_cast<int>(getpid()));
    fflush(stdout);
    if (go_dir == nullptr) continue;
    const std::string go = std::string(go_dir) + "/go-" + std::to_string(phase);
    for (int waited = 0; access(go.c_str(), F_OK) != 0; ++waited) {
      if (waited == 6000) return 1;  // 60 s: the test is gone
      usleep(10 * 1000);
    }
  }
  ReportCounts();
  printf("fake-app: usr2_handler_calls=%d\n", static_cast<int>(g_usr2_calls));
  return 0;
}

// A pause, so that readers see the page of a running process: until the file
// $FAKE_APP_RELEASE exists, or `hold_ms` pass.
void HoldUntilReleased(int hold_ms) {
  const char* release = getenv("FAKE_APP_RELEASE");
  for (int waited = 0; waited < hold_ms; waited += 20) {
    if (release != nullptr && access(release, F_OK) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// A workload of known totals for the live page (gpuperf top/serve, tests/e2e/live_test.sh),
// then a pause (HoldUntilReleased).
int Live(int argc, char** argv) {
  const int launches = ArgOr(argc, argv, 2, 200);
  const int hold_ms = ArgOr(argc, argv, 3, 30000);
  Malloc(3 << 20);
  const uint64_t freed = Malloc(1 << 20);
  Free(freed, 1 << 20);  // peak 4 MiB, 3 MiB left
  Memcpy(1 << 20, /*to_device=*/true);
  Memcpy(2 << 20, /*to_device=*/true);
  Memcpy(1 << 20, /*to_device=*/false);
  Memset(1 << 20);
  uint64_t vec_add_ns = 0, scale_ns = 0;
  int vec_add = 0, scale = 0;
  for (int i = 0; i < launches; ++i) {
    const uint64_t before = g_counts.kernel_ns.load();
    const bool is_scale = i % 4 == 3;
    LaunchKernel(is_scale ? "_Z5scalePfi" : "_Z6vecAddPKfS0_Pfi");
    (is_scale ? scale_ns : vec_add_ns) += g_counts.kernel_ns.load() - before;
    (is_scale ? scale : vec_add)++;
  }
  DeviceSynchronize();
  FakeCuptiApiFrame failing;
  Enter(&failing, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020);
  fake_cupti_api_exit(&failing, cudaErrorMemoryAllocation);
  ReportCounts();
  printf(
      "fake-app: live kernel_ns=%llu copy_ns=%llu set_ns=%llu sync_ns=%llu sync_call_ns=%llu "
      "htod_bytes=%d dtoh_bytes=%d set_bytes=%d vecAdd_launches=%d vecAdd_ns=%llu "
      "scale_launches=%d scale_ns=%llu memory_bytes=%d memory_peak_bytes=%d api_failures=1\n",
      (unsigned long long)g_counts.kernel_ns.load(), (unsigned long long)g_counts.copy_ns.load(),
      (unsigned long long)g_counts.set_ns.load(), (unsigned long long)g_counts.sync_ns.load(),
      (unsigned long long)g_counts.sync_call_ns.load(), 3 << 20, 1 << 20, 1 << 20, vec_add,
      (unsigned long long)vec_add_ns, scale, (unsigned long long)scale_ns, 3 << 20, 4 << 20);
  fflush(stdout);
  HoldUntilReleased(hold_ms);
  return 0;
}

// Names a recorded program chooses, for the tests of how every output shows them
// (tests/e2e/hostile_strings_test.sh): a thread named NAME (its first 15 bytes, as Linux
// keeps them) launches 3 kernels named NAME inside an NVTX range named NAME; then the live
// scenario's pause.
int Names(int argc, char** argv) {
  const char* name = argc > 2 ? argv[2] : "names";
  const int hold_ms = ArgOr(argc, argv, 3, 0);
  std::thread worker([name] {
    char thread_name[16] = {};
    strncpy(thread_name, name, sizeof(thread_name) - 1);
    prctl(PR_SET_NAME, thread_name, 0, 0, 0);
    Marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 1, name);
    for (int i = 0; i < 3; ++i) LaunchKernel(name);
    Marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 1, nullptr);
  });
  worker.join();
  DeviceSynchronize();
  ReportCounts();
  fflush(stdout);
  HoldUntilReleased(hold_ms);
  return 0;
}

// A rank of a data-parallel job, as DDP runs one: each step a forward and a backward
// kernel (3 ms each), then an all-reduce whose kernel starts when this rank gets there and
// ends when every rank has (a barrier through files in FAKE_BARRIER_DIR). RANK, WORLD_SIZE
// and LOCAL_RANK come from the environment, as torchrun sets them.
//
// What the report concludes from it must not depend on the machine's load, so the timeline
// is made of facts the ranks agree on, not of how long a sleep happened to take:
// - the compute kernels last exactly 3 ms (the rank sleeps at least that long between them);
// - the rank FAKE_SLOW_RANK starts each collective's work only after every other rank has
//   arrived at it, and then sleeps FAKE_SLOW_MS: it is the last to arrive every time, and
//   it prints by how much ("fake-app: rank R late_ns=..."), read from the others' arrival
//   times in the barrier files, so a test can compare the report's delays exactly;
// - without a slow rank, every rank's all-reduce starts when the last rank arrived: a
//   balanced job has no straggler however the ranks were scheduled.
void LaunchSpanning(const char* name, uint64_t start, uint64_t end, uint32_t stream) {
  FakeCuptiApiFrame runtime;
  const uint32_t id = Enter(&runtime, CUPTI_CB_DOMAIN_RUNTIME_API,
                            CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, name);
  fake_cupti_api_exit(&runtime, cudaSuccess);
  g_counts.launches++;
  FakeCuptiKernel kernel{};
  kernel.correlation_id = id;
  kernel.name = name;
  kernel.device_id = g_device;
  kernel.context_id = g_context;
  kernel.stream_id = stream;
  kernel.start = start;
  kernel.end = end;
  kernel.grid_x = kernel.grid_y = kernel.grid_z = 1;
  kernel.block_x = kernel.block_y = kernel.block_z = 32;
  fake_cupti_emit_kernel(&kernel);
  g_counts.kernels++;
}

int EnvInt(const char* name, int fallback) {
  const char* text = getenv(name);
  return text != nullptr && *text != '\0' ? atoi(text) : fallback;
}

// The barrier of one collective (`step`) among `world` ranks: each rank leaves a file
// holding its arrival time.
class RankBarrier {
 public:
  RankBarrier(const char* dir, int rank, int world)
      : dir_(dir ? dir : ""), rank_(rank), world_(world) {}

  void Arrive(const std::string& step, uint64_t arrived_ns) const {
    // Written under another name and renamed: a reader never sees half a number.
    const std::string mine = Path(step, rank_);
    if (FILE* f = fopen((mine + ".tmp").c_str(), "w")) {
      fprintf(f, "%llu\n", static_cast<unsigned long long>(arrived_ns));
      fclose(f);
      rename((mine + ".tmp").c_str(), mine.c_str());
    }
  }

  // Waits (up to 60 s) until every rank but this one has arrived at `step`; returns the
  // latest of their arrival times, 0 if one never came.
  uint64_t WaitForOthers(const std::string& step) const {
    for (int waited_us = 0; waited_us < 60'000'000; waited_us += 200) {
      uint64_t latest = 0;
      int arrived = 0;
      for (int r = 0; r < world_; ++r) {
        if (r == rank_) continue;
        FILE* f = fopen(Path(step, r).c_str(), "r");
        if (f == nullptr) continue;
        unsigned long long ns = 0;
        if (fscanf(f, "%llu", &ns) == 1) {
          ++arrived;
          latest = std::max<uint64_t>(latest, ns);
        }
        fclose(f);
      }
      if (arrived == world_ - 1) return latest == 0 ? 1 : latest;
      usleep(200);
    }
    return 0;
  }

 private:
  std::string Path(const std::string& step, int rank) const {
    return dir_ + "/" + step + ".rank" + std::to_string(rank);
  }
  std::string dir_;
  int rank_, world_;
};

int Ranks(int argc, char** argv) {
  const int steps = ArgOr(argc, argv, 2, 20);
  const int rank = EnvInt("RANK", 0);
  const int world = EnvInt("WORLD_SIZE", 1);
  g_device = static_cast<uint32_t>(EnvInt("LOCAL_RANK", rank));
  const bool slow = rank == EnvInt("FAKE_SLOW_RANK", -1);
  const bool any_slow = EnvInt("FAKE_SLOW_RANK", -1) >= 0;
  const int slow_ms = EnvInt("FAKE_SLOW_MS", 0);
  const char* dir = getenv("FAKE_BARRIER_DIR");
  if (world > 1 && dir == nullptr) {
    fprintf(stderr, "fake-app: the ranks scenario needs FAKE_BARRIER_DIR with WORLD_SIZE > 1\n");
    return 2;
  }
  const RankBarrier barrier(dir, rank, world);
  std::string late;  // the slow rank's lateness at each collective, ns
  bool lost = false;
  // The slow rank begins a collective's work once the others are there: returns the latest
  // of their arrivals (0 for any other rank, or alone).
  const auto others_first = [&](const std::string& step) -> uint64_t {
    if (!slow || world < 2) return 0;
    const uint64_t latest = barrier.WaitForOthers(step);
    if (latest == 0) lost = true;
    return latest;
  };
  // This rank arrives at `step` at `arrived`: returns when its collective's kernel starts.
  const auto arrive = [&](const std::string& step, uint64_t arrived, uint64_t others) -> uint64_t {
    if (world < 2) return arrived;
    barrier.Arrive(step, arrived);
    const uint64_t latest = barrier.WaitForOthers(step);
    if (latest == 0) {
      lost = true;
      return arrived;
    }
    if (slow) late += (late.empty() ? "" : ",") + std::to_string(arrived - others);
    return any_slow ? arrived : std::max(arrived, latest);
  };
  CudaInit();
  constexpr uint32_t kCommStream = 99;
  // FAKE_NCCL=1: this rank "uses NCCL", which loads NCCL_PROFILER_PLUGIN (fake_nccl.h) and
  // wraps each collective's launch in the plugin's events (FAKE_NCCL_VERSION=4: NCCL 2.27's
  // table). A broadcast first (root 0, 4096 bytes); all-reduces of 1 MiB on even steps and
  // 2 MiB on odd ones; at the end a group of two bf16 all-reduces run by one kernel.
  fake_nccl::Plugin nccl;
  const char* plugin_path = getenv("NCCL_PROFILER_PLUGIN");
  const bool with_plugin = EnvInt("FAKE_NCCL", 0) != 0 && plugin_path != nullptr &&
                           strcmp(plugin_path, "none") != 0 &&
                           nccl.Load(plugin_path, EnvInt("FAKE_NCCL_VERSION", 5)) &&
                           nccl.InitComm(0x5eed0000c0ffeeull, "fake_dp", world, rank);
  const auto collective = [&](const std::vector<fake_nccl::Collective>& group,
                              const std::function<void()>& launch) {
    with_plugin ? nccl.Group(group, launch) : launch();
  };
  if (with_plugin) nccl.Oddities();
  // FAKE_NCCL_BENCH=N: the plugin's cost per collective (reduce-scatters, seen by nothing else).
  if (with_plugin && EnvInt("FAKE_NCCL_BENCH", 0) > 0) {
    printf("fake-nccl: plugin v%d, %.0f ns per collective over %d\n", nccl.version(),
           nccl.BenchNsPerCollective(EnvInt("FAKE_NCCL_BENCH", 0)), EnvInt("FAKE_NCCL_BENCH", 0));
  }
  // A collective launched at once when this rank gets there (no compute before it).
  const auto short_collective = [&](const std::string& step, const char* kernel, uint64_t length_ns,
                                    const std::vector<fake_nccl::Collective>& group) {
    const uint64_t others = others_first(step);
    const uint64_t start = arrive(step, fake_cupti_now(), others);
    collective(group, [&] { LaunchSpanning(kernel, start, start + length_ns, kCommStream); });
  };
  if (EnvInt("FAKE_NCCL", 0) != 0) {
    short_collective("broadcast", "ncclDevKernel_Broadcast_RING_LL", 50'000,
                     {{"Broadcast", 4096, "ncclInt8", 0}});
  }
  for (int step = 0; step < steps && !lost; ++step) {
    const std::string name = "step" + std::to_string(step);
    const uint64_t others = others_first(name);
    if (slow) usleep(static_cast<useconds_t>(slow_ms) * 1000);
    for (const char* kernel : {"_Z7forwardv", "_Z8backwardv"}) {
      const uint64_t start = fake_cupti_now();
      usleep(3000);
      LaunchSpanning(kernel, start, start + 3'000'000, kStreamId);
    }
    const uint64_t start = arrive(name, fake_cupti_now(), others);
    const size_t count = 262144u * static_cast<size_t>(1 + step % 2);
    collective({{"AllReduce", count}}, [&] {
      LaunchSpanning("ncclDevKernel_AllReduce_Sum_f32_RING_LL", start,
                     std::max(start, fake_cupti_now()) + 20'000, kCommStream);
    });
  }
  if (EnvInt("FAKE_NCCL", 0) != 0 && !lost) {
    short_collective("group", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 40'000,
                     {{"AllReduce", 1000, "ncclBfloat16"}, {"AllReduce", 3000, "ncclBfloat16"}});
  }
  if (lost) {
    fprintf(stderr, "fake-app: rank %d: the other ranks never reached a collective\n", rank);
    return 1;
  }
  if (with_plugin) nccl.Finalize();
  if (slow) printf("fake-app: rank %d late_ns=%s\n", rank, late.c_str());
  ReportCounts();
  return 0;
}

// For the signal tests (tests/e2e/signals_test.sh): M launches, then the program waits to be
// signalled, as a long job does. Once the launches are done (their count is on the fake-app
// line, printed first), $FAKE_APP_READY appears, holding "PID PGID"; $FAKE_APP_RELEASE ends the
// wait (after 120 s the program gives up: exit 3). HOW says what the program does with signals:
//   default      leaves them all as it found them;
//   own          its own SIGINT and SIGTERM handlers, installed before CUDA (so before the
//                injection's), count them: printed as the counts change, and at the end;
//   ignore_pipe  ignores SIGPIPE (as Python does) before CUDA, then writes to a closed pipe;
//   pipe         writes to a closed pipe after the launches: a real SIGPIPE;
//   second_term  sends itself SIGTERM; another thread sends a second one while the first's
//                handler runs (SIGTERM is in the main thread's blocked set exactly then);
//   segv, bus, fpe, ill  faults, for real, after the launches;
//   own_segv     its own SIGSEGV handler (as the JVM has) recovers from a fault; then exits.
// A second, idle thread stands in for the others a CUDA program has (the driver's, a data
// loader's): a signal for the process can land on it while the main thread handles one.
volatile sig_atomic_t g_sigint_calls = 0;
volatile sig_atomic_t g_sigterm_calls = 0;
volatile sig_atomic_t g_segv_handled = 0;
sigjmp_buf g_segv_recovery;

void WriteReadyFile() {
  const char* ready = getenv("FAKE_APP_READY");
  if (ready == nullptr) return;
  const std::string part = std::string(ready) + ".part";
  if (FILE* f = fopen(part.c_str(), "w")) {
    fprintf(f, "%d %d\n", static_cast<int>(getpid()), static_cast<int>(getpgrp()));
    fclose(f);
    rename(part.c_str(), ready);  // whole or absent
  }
}

void WriteToClosedPipe() {
  int fds[2];
  if (pipe(fds) != 0) return;
  close(fds[0]);
  const char byte = 0;
  const ssize_t written = write(fds[1], &byte, 1);
  printf("fake-app: wrote to a closed pipe: %zd (%s)\n", written,
         written < 0 ? strerror(errno) : "");
  fflush(stdout);
  close(fds[1]);
}

void Fault(const std::string& how) {
  if (how == "segv") *static_cast<volatile int*>(nullptr) = 1;
  if (how == "fpe") {
    volatile int dividend = 7, zero = 0;  // both read at run time: a real division
    volatile int quotient = dividend / zero;
    (void)quotient;
  }
  if (how == "ill") {
#if defined(__x86_64__)
    asm volatile("ud2");
#else
    __builtin_trap();
#endif
  }
  if (how == "bus") {
    // A page of a file with no bytes: touching it is a bus error.
    const int fd = memfd_create("fake-app-bus", 0);
    void* page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (page != MAP_FAILED) *static_cast<volatile char*>(page) = 1;
  }
  fprintf(stderr, "fake-app: the %s fault did not happen\n", how.c_str());
}

bool TermBlockedIn(pid_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/status";
  FILE* f = fopen(path.c_str(), "r");
  if (f == nullptr) return false;
  char line[256];
  unsigned long long blocked = 0;
  while (fgets(line, sizeof(line), f) != nullptr) {
    if (sscanf(line, "SigBlk: %llx", &blocked) == 1) break;
  }
  fclose(f);
  return (blocked >> (SIGTERM - 1)) & 1;
}

int AwaitSignal(int argc, char** argv) {
  const int launches = ArgOr(argc, argv, 2, 30000);
  const std::string how = argc > 3 ? argv[3] : "default";
  if (how == "own") {
    signal(SIGINT, [](int) { g_sigint_calls = g_sigint_calls + 1; });
    signal(SIGTERM, [](int) { g_sigterm_calls = g_sigterm_calls + 1; });
  }
  if (how == "ignore_pipe") signal(SIGPIPE, SIG_IGN);
  if (how == "own_segv") {
    struct sigaction recover;
    memset(&recover, 0, sizeof(recover));
    recover.sa_handler = [](int) {
      g_segv_handled = g_segv_handled + 1;
      siglongjmp(g_segv_recovery, 1);
    };
    sigaction(SIGSEGV, &recover, nullptr);
  }
  CudaInit();
  std::thread([] {
    for (;;) pause();
  }).detach();
  for (int i = 0; i < launches; ++i) LaunchKernel("_Z11awaitSignalv");
  ReportCounts();
  if (how == "segv" || how == "bus" || how == "fpe" || how == "ill") {
    Fault(how);
    return 1;
  }
  if (how == "own_segv") {
    if (sigsetjmp(g_segv_recovery, 1) == 0) Fault("segv");
    printf("fake-app: segv_handled=%d\n", static_cast<int>(g_segv_handled));
    return 0;
  }
  if (how == "pipe" || how == "ignore_pipe") WriteToClosedPipe();
  WriteReadyFile();
  if (how == "second_term") {
    const pid_t main_tid = gettid();
    std::thread([main_tid] {
      for (int polls = 0; polls < 2'000'000; ++polls) {
        if (TermBlockedIn(main_tid)) {
          fprintf(stderr, "fake-app: a second SIGTERM during the first one's handler\n");
          kill(getpid(), SIGTERM);
          return;
        }
        usleep(20);
      }
    }).detach();
    kill(getpid(), SIGTERM);
  }
  const char* release = getenv("FAKE_APP_RELEASE");
  int reported = 0;
  for (int waited_ms = 0;; waited_ms += 5) {
    if (g_sigint_calls + g_sigterm_calls != reported) {
      reported = g_sigint_calls + g_sigterm_calls;
      printf("fake-app: sigint_calls=%d sigterm_calls=%d\n", static_cast<int>(g_sigint_calls),
             static_cast<int>(g_sigterm_calls));
      fflush(stdout);
    }
    if (release != nullptr && access(release, F_OK) == 0) break;
    if (waited_ms >= 120000) {
      printf("fake-app: no signal ended the wait in 120 s\n");
      return 3;
    }
    usleep(5000);
  }
  printf("fake-app: released sigint_calls=%d sigterm_calls=%d\n", static_cast<int>(g_sigint_calls),
         static_cast<int>(g_sigterm_calls));
  fflush(stdout);
  return 0;
}

// For gpuperf attach's tests (tests/e2e/attach_*_test.sh): a program started without any
// profiler, which a test attaches to between its phases. Each PHASE is
//   N      N launches from the main thread (every third nested), then one copy, one set and a
//          stream synchronization;
//   NxT    T threads launching N each, then the same copy, set and synchronization;
//   run:T  T threads launching at full rate until FAKE_APP_GO_DIR/stop-K exists (each looks
//          every 256 launches), the main thread waiting for them in pthread_join;
//   syncs:T  T threads each launching and synchronizing until stop-K exists.
//   spin   no launch: the main thread computes until stop-K exists.
//   cudaspin  no launch: the main thread computes until stop-K exists, 99.9% of its rounds
//          inside libcuda (fake_cuda_busy), as a loop of launches and synchronizations does.
// Phase K's kernels are named _Z6phaseKv (_Z7phaseKKv from 10 on). After phase K the app
// prints "fake-app: phase K done kernels=.. memcpys=.. memsets=.. syncs=.. runtime_api=..
// driver_api=.. pid=..", makes FAKE_APP_GO_DIR/done-K and waits: until go-K exists, polled
// with 10 ms sleeps, or with FAKE_APP_GO_FIFO blocked in read() of that FIFO until one byte
// comes (anything else, EINTR included, is printed and ends the program with 4). It ends
// with the usual counts line and exit status 5, which no profiler may change. After each
// phase line comes the fake CUPTI's own: "fake-cupti: phase K callbacks=.. records=..
// subscribed=.. kinds_enabled=.. finalized=.. calls_across_finalize=.. finalize_off_api_exit=..
// finalize_after_callback_off=..",
// what a profiler made CUPTI do meanwhile.
std::string PhaseKernel(int phase) {
  const std::string name = "phase" + std::to_string(phase);
  return "_Z" + std::to_string(name.size()) + name + "v";
}

bool WaitForGo(int phase, const char* go_dir, int fifo) {
  if (fifo >= 0) {
    char byte = 0;
    const ssize_t n = read(fifo, &byte, 1);
    if (n != 1) {
      printf("fake-app: phase %d: read of the go FIFO returned %zd (%s)\n", phase, n,
             n < 0 ? strerror(errno) : "end of file");
      return false;
    }
    printf("fake-app: phase %d: go (one byte read)\n", phase);
    fflush(stdout);
    return true;
  }
  if (go_dir == nullptr) return true;
  const std::string go = std::string(go_dir) + "/go-" + std::to_string(phase);
  for (int waited = 0; access(go.c_str(), F_OK) != 0; ++waited) {
    if (waited == 12000) return false;  // 120 s: the test is gone
    usleep(10 * 1000);
  }
  return true;
}

void MarkPhaseDone(int phase, const char* go_dir) {
  if (go_dir == nullptr) return;
  const std::string done = std::string(go_dir) + "/done-" + std::to_string(phase);
  if (FILE* f = fopen((done + ".part").c_str(), "w")) {
    fclose(f);
    rename((done + ".part").c_str(), done.c_str());
  }
}

// FAKE_APP_GO_DIR/stop-K: what ends a phase that runs until told.
std::string StopFile(const char* go_dir, int phase) {
  return std::string(go_dir != nullptr ? go_dir : ".") + "/stop-" + std::to_string(phase);
}

// T threads each running `step` (with its count) until `stop` exists, looked for every
// `every` steps.
void ThreadsUntilStop(int threads, const std::string& stop, uint64_t every,
                      const std::function<void(uint64_t)>& step) {
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&stop, &step, every] {
      for (uint64_t i = 0;; ++i) {
        if (i % every == 0 && access(stop.c_str(), F_OK) == 0) break;
        step(i);
      }
    });
  }
  for (auto& worker : workers) worker.join();
}

int AttachTarget(int argc, char** argv) {
  g_emit_inside_call = true;
  const char* go_dir = getenv("FAKE_APP_GO_DIR");
  const char* fifo_path = getenv("FAKE_APP_GO_FIFO");
  // O_RDWR: the open never waits for a writer, and the read waits for a byte.
  const int fifo = fifo_path != nullptr ? open(fifo_path, O_RDWR | O_CLOEXEC) : -1;
  if (fifo_path != nullptr && fifo < 0) {
    fprintf(stderr, "fake-app: cannot open %s: %s\n", fifo_path, strerror(errno));
    return 2;
  }
  for (int phase = 1; phase + 1 < argc; ++phase) {
    const std::string spec = argv[phase + 1];
    const std::string name = PhaseKernel(phase);
    FakeCuptiStats cupti_before;
    fake_cupti_get_stats(&cupti_before);
    const uint64_t kernels = g_counts.kernels, memcpys = g_counts.memcpys,
                   memsets = g_counts.memsets, syncs = g_counts.syncs,
                   runtime = g_counts.runtime_api, driver = g_counts.driver_api;
    if (spec == "spin") {
      // The only thread computes in user space until stop-K exists, with a system call only
      // every 2^22 rounds: gpuperf attach finds no thread waiting and stops it where it runs.
      const std::string stop = StopFile(go_dir, phase);
      volatile uint64_t state = 1;
      for (uint64_t i = 1;; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        if ((i & ((1u << 22) - 1)) == 0 && access(stop.c_str(), F_OK) == 0) break;
      }
    } else if (spec == "cudaspin") {
      // 65,536 rounds inside libcuda for every 64 in the program: a stop at a random moment
      // finds the thread inside CUDA 999 times in 1,000.
      using Busy = unsigned long long (*)(unsigned long long);
      auto busy = reinterpret_cast<Busy>(dlsym(RTLD_DEFAULT, "fake_cuda_busy"));
      if (busy == nullptr) {
        fprintf(stderr, "fake-app: cudaspin needs FAKE_APP_LIBCUDA\n");
        return 2;
      }
      const std::string stop = StopFile(go_dir, phase);
      volatile uint64_t state = 1;
      for (uint64_t i = 1;; ++i) {
        busy(65536);
        for (int k = 0; k < 64; ++k) state = state * 6364136223846793005ull + 1;
        if ((i & 63) == 0 && access(stop.c_str(), F_OK) == 0) break;
      }
    } else if (spec.rfind("syncs:", 0) == 0) {
      // T threads launching and synchronizing, until stop-K exists: the window ends while a
      // synchronization's exit callback runs (FAKE_CUPTI_STREAM_ID_DELAY_US makes it long).
      ThreadsUntilStop(atoi(spec.c_str() + 6), StopFile(go_dir, phase), 1, [&name](uint64_t) {
        LaunchKernel(name.c_str());
        StreamSynchronize();
      });
    } else if (spec.rfind("run:", 0) == 0) {
      ThreadsUntilStop(atoi(spec.c_str() + 4), StopFile(go_dir, phase), 256,
                       [&name](uint64_t i) { LaunchKernel(name.c_str(), /*nested=*/i % 3 == 0); });
    } else {
      const size_t x = spec.find('x');
      const int launches = atoi(spec.c_str());
      const int threads = x == std::string::npos ? 0 : atoi(spec.c_str() + x + 1);
      if (threads == 0) {
        for (int i = 0; i < launches; ++i) LaunchKernel(name.c_str(), /*nested=*/i % 3 == 0);
      } else {
        std::vector<std::thread> workers;
        for (int t = 0; t < threads; ++t) {
          workers.emplace_back([&name, launches] {
            for (int i = 0; i < launches; ++i) LaunchKernel(name.c_str(), /*nested=*/i % 3 == 0);
          });
        }
        for (auto& worker : workers) worker.join();
      }
      Memcpy(4096, /*to_device=*/true);
      Memset(4096);
      StreamSynchronize();
    }
    printf(
        "fake-app: phase %d done kernels=%llu memcpys=%llu memsets=%llu syncs=%llu "
        "runtime_api=%llu driver_api=%llu pid=%d\n",
        phase, (unsigned long long)(g_counts.kernels - kernels),
        (unsigned long long)(g_counts.memcpys - memcpys),
        (unsigned long long)(g_counts.memsets - memsets),
        (unsigned long long)(g_counts.syncs - syncs),
        (unsigned long long)(g_counts.runtime_api - runtime),
        (unsigned long long)(g_counts.driver_api - driver), static_cast<int>(getpid()));
    // What CUPTI saw of the phase (the fake's line, not the app's own output): callbacks
    // issued, records written, and whether a client is subscribed or has kinds on now.
    FakeCuptiStats cupti;
    fake_cupti_get_stats(&cupti);
    printf(
        "fake-cupti: phase %d callbacks=%llu records=%llu subscribed=%llu kinds_enabled=%llu "
        "finalized=%llu calls_across_finalize=%llu finalize_off_api_exit=%llu "
        "finalize_after_callback_off=%llu\n",
        phase, (unsigned long long)(cupti.callbacks_issued - cupti_before.callbacks_issued),
        (unsigned long long)(cupti.records_written - cupti_before.records_written),
        (unsigned long long)cupti.subscribed, (unsigned long long)cupti.kinds_enabled,
        (unsigned long long)cupti.finalize_calls, (unsigned long long)cupti.calls_across_finalize,
        (unsigned long long)cupti.finalize_off_api_exit,
        (unsigned long long)cupti.finalize_after_callback_off);
    fflush(stdout);
    MarkPhaseDone(phase, go_dir);
    if (!WaitForGo(phase, go_dir, fifo)) return 4;
  }
  ReportCounts();
  return 5;
}

struct Scenario {
  const char* name;
  int (*run)(int, char**);
  const char* help;
  bool initializes_cuda_itself = false;  // main() leaves CudaInit() to the scenario
};
const Scenario kScenarios[] = {
    {"basic", Basic, "malloc, copies, 5 launches (one in an external-correlation range), sync"},
    {"threads", Threads, "[N=4] [M=1000]: N threads x M launches, every third one nested"},
    {"nested", Nested, "[M=100]: cudaLaunchKernel nesting cuLaunchKernel"},
    {"graph", Graph, "two cudaGraphLaunch of a 3-kernel graph"},
    {"driver_api", DriverApi, "[M=10]: driver launches, cudaGetDevice between, a failing malloc"},
    {"drops", Drops, "[M=100]: launches, 7 dropped records, 1 incomplete kernel"},
    {"exit_flush", ExitFlush, "[M=500]: launches left pending at a normal exit"},
    {"signal", Signal, "[M=300]: launches, then SIGTERM to itself"},
    {"fork", Fork, "a child that only exits, a fork+exec of 'basic', 100 launches"},
    {"fork_linger", ForkLinger,
     "[M=50]: M launches, a forked child that lives on until $FAKE_APP_RELEASE, M more"},
    {"second_subscriber", SecondSubscriber, "another tool holds the CUPTI subscriber slot"},
    {"device_reset", DeviceReset, "basic, cudaDeviceReset, a new context, 5 launches"},
    {"os_exit", OsExit, "[M=1000] [WAIT_MS=600]: launches, a pause, 10 more, then _exit"},
    {"nvtx", Nvtx, "nested NVTX ranges and instant markers around launches"},
    {"window", Window, "[M=50] [WAIT_MS=2000]: M launches, a pause, M more (capture range)"},
    {"many", Many, "[M=200000]: launches from one thread"},
#ifdef FAKE_APP_CHAIN
    {"chain", Chain,
     "[N=4] [M=300]: N threads x M launches through libraries without frame pointers"},
#endif
    {"metrics", Metrics, "[M=2]: copy/fma/latency kernels, NVTX ranges, a graph, M rounds"},
    {"pc_sampling", PcSampling, "CUBIN FUNCTION [OFFSET:STALL:COUNT...]: a module and samples"},
    {"churn", Churn, "[N=10000] [M=2]: N short-lived threads (8 at a time) x M launches, RSS"},
    {"self_kill", SelfKill, "[M=300] [WAIT_MS=700]: launches, a pause, then SIGKILL to itself"},
    {"abort", Abort, "[M=300]: launches, then an uncaught exception (abort)"},
    {"fork_then_cuda", ForkThenCuda, "[M=20]: fork before CUDA starts; both launch M", true},
    {"exec_after_cuda", ExecAfterCuda, "[M=50] [WAIT_MS=700]: launches, a pause, exec of basic"},
    {"flight", Flight, "N[E] N[E]...: phases of N launches (E: then a failing malloc)", true},
    {"live", Live,
     "[M=200] [HOLD_MS=30000]: known totals, then a pause ($FAKE_APP_RELEASE ends it)"},
    {"names", Names,
     "NAME [HOLD_MS=0]: a thread, 3 kernels and an NVTX range named NAME, then a pause "
     "($FAKE_APP_RELEASE ends it)"},
    {"ranks", Ranks,
     "[STEPS=20]: a DDP-like rank (RANK, WORLD_SIZE, LOCAL_RANK; FAKE_BARRIER_DIR, "
     "FAKE_SLOW_RANK, FAKE_SLOW_MS)",
     true},
    {"kineto", KinetoRefused,
     "[M=400] [SESSIONS=2] [HOLD=0]: M/2 launches, then profiling sessions that subscribe and "
     "give up when refused (HOLD=1: the program's own client holds CUPTI)"},
    {"syncs", Syncs,
     "[M=20]: M x (2 launches, stream sync, stream wait event, launch, device sync)"},
    {"bench_detach", BenchDetach,
     "[M=100]: M launches; gpuperf_bench_toggle -2, another client, M; -3, 1, M; -4, M; -5, 1, M; "
     "-201, M; 7, M; 8, M; 9, M"},
    {"await_signal", AwaitSignal,
     "[M=30000] [HOW=default]: launches, then waits for a signal ($FAKE_APP_READY, "
     "$FAKE_APP_RELEASE; HOW: own, ignore_pipe, pipe, second_term, segv, bus, fpe, ill, "
     "own_segv)",
     true},
    {"attach_target", AttachTarget,
     "PHASE...: phases of N, NxT or run:T launches, each followed by a wait for the test "
     "(FAKE_APP_GO_DIR, FAKE_APP_GO_FIFO, FAKE_APP_LIBCUDA; gpuperf attach's tests)"},
    {"late_profiler", LateProfiler,
     "[M=4000] [MS=800]: M/2 launches, a Kineto-like client registers its buffers, M/2 more"},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || strcmp(argv[1], "--list") == 0 || strcmp(argv[1], "--help") == 0) {
    printf("usage: fake_cuda_app <scenario> [args]\n");
    for (const auto& scenario : kScenarios) printf("  %-18s %s\n", scenario.name, scenario.help);
    return argc < 2 ? 2 : 0;
  }
  const Scenario* chosen = nullptr;
  for (const auto& scenario : kScenarios) {
    if (strcmp(argv[1], scenario.name) == 0) chosen = &scenario;
  }
  if (chosen == nullptr) {
    fprintf(stderr, "fake-app: unknown scenario '%s' (see --list)\n", argv[1]);
    return 2;
  }
  g_scenario = chosen->name;
  // Registered before the injection loads, so it runs after the injection's own exit handler
  // and reports what the fake delivered in the end.
  if (getenv("FAKE_APP_NO_STATS") == nullptr) atexit([] { fake_cupti_print_stats(1); });
  if (chosen->run == SecondSubscriber) fake_cupti_set_second_subscriber("Nsight Systems");
  // FAKE_APP_OTHER_SUBSCRIBER=NAME: another tool holds CUPTI's subscriber slot from the start.
  if (const char* other = getenv("FAKE_APP_OTHER_SUBSCRIBER"); other != nullptr && *other != '\0') {
    fake_cupti_set_second_subscriber(other);
  }
  if (!chosen->initializes_cuda_itself) CudaInit();
  return chosen->run(argc, argv);
}
