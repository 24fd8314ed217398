#include "support/timeline_trace.h"

#include <string>

namespace gpuperf::testing {
namespace {

class Builder {
 public:
  explicit Builder(Trace& trace) : trace_(trace) {
    trace_.strings.assign(1, "");
    trace_.stacks.assign(1, StackRecord());
  }
  StringId S(const std::string& text) {
    for (StringId id = 1; id < trace_.strings.size(); ++id) {
      if (trace_.strings[id] == text) return id;
    }
    trace_.strings.push_back(text);
    return static_cast<StringId>(trace_.strings.size() - 1);
  }

 private:
  Trace& trace_;
};

ApiRecord Api(uint32_t tid, ApiDomain domain, StringId name, uint64_t start, uint64_t end,
              uint32_t correlation) {
  ApiRecord api;
  api.pid = kTimelinePid;
  api.tid = tid;
  api.domain = domain;
  api.callback_id = 211;
  api.name = name;
  api.start_ns = start;
  api.end_ns = end;
  api.correlation_id = correlation;
  return api;
}

KernelRecord Kernel(StringId name, uint32_t stream, uint64_t start, uint64_t end,
                    uint32_t correlation) {
  KernelRecord kernel;
  kernel.pid = kTimelinePid;
  kernel.name = name;
  kernel.device_id = 0;
  kernel.context_id = 1;
  kernel.stream_id = stream;
  kernel.start_ns = start;
  kernel.end_ns = end;
  kernel.grid_x = 64;
  kernel.grid_y = 2;
  kernel.grid_z = 1;
  kernel.block_x = 256;
  kernel.block_y = 1;
  kernel.block_z = 1;
  kernel.registers_per_thread = 32;
  kernel.static_shared_bytes = 1024;
  kernel.dynamic_shared_bytes = 2048;
  kernel.correlation_id = correlation;
  return kernel;
}

}  // namespace

Trace MakeTimelineTrace() {
  Trace trace;
  Builder b(trace);
  const uint32_t pid = kTimelinePid;
  trace.processes.push_back({pid, 1, b.S("python3 train.py"), b.S("host"), b.S("test"), 1000,
                             1'000'000});  // ended cleanly: no data loss
  trace.threads.push_back({pid, kTimelineTid, b.S("main")});
  trace.threads.push_back({pid, kTimelineOtherTid, b.S("loader")});
  DeviceRecord device;
  device.pid = pid;
  device.device_id = 0;
  device.name = b.S("NVIDIA H100 80GB HBM3");
  trace.devices.push_back(device);
  trace.clocks.push_back({pid, 1000, 1'700'000'000'000'000'000ull});

  // A launch stack: main -> Model::forward -> launch_gemm, resolved by symbols.
  const StringId module = b.S("/opt/app/libmodel.so");
  trace.modules.push_back({pid, module, b.S("abcd"), 0x1000, 0x1000, 0x9000});
  trace.stacks.push_back({pid, 1, {0x3010, 0x2010, 0x1010}});  // innermost first
  trace.symbols.push_back({pid, 0x1010, {{b.S("main"), b.S("/src/main.cc"), 10, module, 0x10}}});
  trace.symbols.push_back(
      {pid, 0x2010, {{b.S("Model::forward"), b.S("/src/model.cc"), 20, module, 0x1010}}});
  trace.symbols.push_back(
      {pid, 0x3010, {{b.S("launch_gemm"), b.S("/src/gemm.cu"), 30, module, 0x2010}}});

  const StringId launch = b.S("cudaLaunchKernel");
  const StringId cu_launch = b.S("cuLaunchKernel");
  const StringId graph_launch = b.S("cudaGraphLaunch");
  const StringId memcpy_api = b.S("cudaMemcpyAsync");
  const StringId sync_api = b.S("cudaDeviceSynchronize");
  const StringId gemm = b.S("_Z4gemmPfS_i");  // demangles to gemm(float*, float*, int)
  const StringId relu = b.S("relu_kernel");

  // Correlation 1: a runtime launch with a nested driver launch (correlation 2), read in
  // CUPTI's order (the inner call ends first). Kernel of correlation 1.
  trace.apis.push_back(Api(kTimelineTid, ApiDomain::kDriver, cu_launch, 2200, 4000, 2));
  trace.apis.push_back(Api(kTimelineTid, ApiDomain::kRuntime, launch, 2000, 5000, 1));
  trace.launch_links.push_back({pid, kTimelineTid, 1, 1, launch, 2000});
  trace.launch_links.push_back({pid, kTimelineTid, 2, 1, launch, 2000});
  trace.kernels.push_back(Kernel(gemm, 7, 10'000, 20'000, 1));

  // Correlation 3: a graph launch running three kernels.
  trace.apis.push_back(Api(kTimelineTid, ApiDomain::kRuntime, graph_launch, 6000, 9000, 3));
  trace.launch_links.push_back({pid, kTimelineTid, 3, 1, graph_launch, 6000});
  trace.kernels.push_back(Kernel(relu, 7, 20'000, 21'000, 3));
  trace.kernels.push_back(Kernel(relu, 7, 21'000, 22'500, 3));
  trace.kernels.push_back(Kernel(relu, 7, 23'000, 24'000, 3));

  // Correlation 4: a kernel whose launch call was not recorded: no arrow.
  trace.kernels.push_back(Kernel(relu, 7, 25'000, 26'000, 4));
  // Correlation 5: a call without GPU work: no arrow.
  trace.apis.push_back(Api(kTimelineOtherTid, ApiDomain::kRuntime, sync_api, 9500, 30'000, 5));

  // Correlation 6: overlaps the kernel of correlation 1 on stream 7 (as a buggy or
  // reordered trace might): goes to a second lane.
  trace.apis.push_back(Api(kTimelineOtherTid, ApiDomain::kRuntime, launch, 3000, 3500, 6));
  trace.kernels.push_back(Kernel(b.S(kNastyKernelName), 7, 15'000, 25'500, 6));

  // Correlation 7: a copy on stream 8.
  trace.apis.push_back(Api(kTimelineTid, ApiDomain::kRuntime, memcpy_api, 9100, 9400, 7));
  MemcpyRecord copy;
  copy.pid = pid;
  copy.kind = MemcpyKind::kHtoD;
  copy.src_kind = MemoryKind::kPinned;
  copy.dst_kind = MemoryKind::kDevice;
  copy.bytes = 1'000'000;
  copy.device_id = 0;
  copy.stream_id = 8;
  copy.start_ns = 12'000;
  copy.end_ns = 62'000;  // 20 GB/s
  copy.correlation_id = 7;
  trace.memcpys.push_back(copy);

  MemsetRecord set;
  set.pid = pid;
  set.bytes = 4096;
  set.memory_kind = MemoryKind::kDevice;
  set.device_id = 0;
  set.stream_id = 8;
  set.start_ns = 63'000;
  set.end_ns = 64'000;
  trace.memsets.push_back(set);

  // NVTX: an outer range with an inner one, a mark, and a range that never ended.
  trace.nvtxs.push_back({pid, kTimelineTid, NvtxKind::kRange, b.S("step"), 0, 1500, 60'000, 0});
  trace.nvtxs.push_back({pid, kTimelineTid, NvtxKind::kRange, b.S("forward"), 0, 1800, 9500, 0});
  trace.nvtxs.push_back({pid, kTimelineTid, NvtxKind::kMark, b.S("checkpoint"), 0, 9600, 9600, 0});
  trace.nvtxs.push_back({pid, kTimelineTid, NvtxKind::kRange, b.S("lost"), 0, 50'000, 0, 0});

  MemoryRecord alloc;
  alloc.pid = pid;
  alloc.op = MemoryOp::kAllocation;
  alloc.memory_kind = MemoryKind::kDevice;
  alloc.bytes = 1 << 20;
  alloc.timestamp_ns = 1500;
  trace.memories.push_back(alloc);
  MemoryRecord release = alloc;
  release.op = MemoryOp::kRelease;
  release.timestamp_ns = 65'000;
  trace.memories.push_back(release);
  return trace;
}

}  // namespace gpuperf::testing
