#include "support/hostile_trace.h"

#include <string>

#include "support/test_trace.h"

namespace gpuperf::testing {

Trace HostileNamesTrace(std::string_view name_view) {
  constexpr uint32_t kPid = 4242, kTid = 4243;
  constexpr uint64_t kUs = 1000;
  const std::string name(name_view);
  TestTrace t;
  t.Process(kPid, "python3 train.py --tag " + name);
  t.trace().processes.back().hostname = t.Str("node-" + name);
  t.Thread(kPid, kTid, name);
  DeviceRecord device = H100Device();
  device.pid = kPid;
  device.name = t.Str("GPU " + name);
  t.trace().devices.push_back(device);

  const StackId stack = t.Stack(
      kPid, {"main", "python3.11!_PyEval_EvalFrameDefault", "lib" + name + ".so!launch_" + name});
  t.PythonCode(kPid, 1, "step_" + name, name + ".py", 20);
  t.AddPythonFrame(stack, 1, 2, true);
  for (SymbolRecord& symbol : t.trace().symbols) {
    for (SymbolFrame& frame : symbol.frames) frame.file = t.Str("src/" + name + ".cc");
  }

  // 300 launches of 10 µs, each running a 2 µs kernel: launch bound.
  uint32_t correlation = 0;
  auto call = [&](std::string_view api, uint64_t start_ns, uint64_t ns) {
    t.trace().apis.push_back({.pid = kPid,
                              .tid = kTid,
                              .domain = ApiDomain::kRuntime,
                              .name = t.Str(api),
                              .start_ns = start_ns,
                              .end_ns = start_ns + ns,
                              .correlation_id = ++correlation});
    t.Link(kPid, kTid, correlation, stack, api, start_ns);
    return correlation;
  };
  uint64_t at = 0;
  for (int i = 0; i < 300; ++i, at += 10 * kUs) {
    t.Kernel(kPid, name, call("cudaLaunchKernel", at, 10 * kUs), at + 10 * kUs, at + 12 * kUs);
  }
  t.trace().syncs.push_back({.pid = kPid,
                             .tid = kTid,
                             .kind = SyncKind::kContextSynchronize,
                             .stream_id = UINT32_MAX,
                             .start_ns = at,
                             .end_ns = at + 20 * kUs,
                             .correlation_id = call("cudaDeviceSynchronize", at, 20 * kUs)});
  t.trace().memories.push_back({.pid = kPid,
                                .op = MemoryOp::kAllocation,
                                .memory_kind = MemoryKind::kDevice,
                                .address = 0x7f0000000000,
                                .bytes = 1 << 20,
                                .timestamp_ns = at + 30 * kUs,
                                .correlation_id = call("cudaMalloc", at + 30 * kUs, kUs)});
  t.trace().nvtxs.push_back({.pid = kPid,
                             .tid = kTid,
                             .kind = NvtxKind::kRange,
                             .name = t.Str(name),
                             .domain = t.Str("domain " + name),
                             .start_ns = 0,
                             .end_ns = at + 40 * kUs});
  return std::move(t.trace());
}

}  // namespace gpuperf::testing
