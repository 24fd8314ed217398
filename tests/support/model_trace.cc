#include "support/model_trace.h"

#include <gtest/gtest.h>

#include "gpuperf/trace_writer.h"
#include "support/test_trace.h"

namespace gpuperf::testing {

Trace ModelTrace() {
  constexpr uint32_t kPid = 4242;
  constexpr uint32_t kLoader = 4250;
  TestTrace t;
  t.Process(kPid, "python3 train.py --epochs 1");
  t.Thread(kPid, kPid, "python3");
  t.Thread(kPid, kLoader, "data_loader");

  const std::vector<std::string> step = {
      "_start", "__libc_start_main",    "main",
      "0x2f40", "train(Config const&)", "Trainer::step(Batch const&)"};
  auto with = [&step](std::vector<std::string> tail) {
    std::vector<std::string> frames = step;
    frames.insert(frames.end(), tail.begin(), tail.end());
    return frames;
  };
  const StackId qkv = t.Stack(
      kPid, with({"Model::forward(at::Tensor const&)", "Attention::forward(at::Tensor const&)",
                  "at::native::matmul(at::Tensor const&, at::Tensor const&)"}));
  const StackId softmax = t.Stack(
      kPid, with({"Model::forward(at::Tensor const&)", "Attention::forward(at::Tensor const&)",
                  "at::native::softmax_cuda(at::Tensor const&, long, bool)"}));
  const StackId mlp =
      t.Stack(kPid, with({"Model::forward(at::Tensor const&)", "MLP::forward(at::Tensor const&)",
                          "at::native::matmul(at::Tensor const&, at::Tensor const&)"}));
  const StackId optimizer =
      t.Stack(kPid, with({"Optimizer::step()", "CudaGraph::replay(cudaStream_t)"}));
  const StackId zero_grad = t.Stack(kPid, with({"Optimizer::zero_grad()"}));
  const StackId loader = t.Stack(
      kPid, {"start_thread", "DataLoader::worker_loop()", "DataLoader::copy_to_device(Batch&)"});

  const char* gemm = "ampere_sgemm_128x64_tn";
  const char* softmax_kernel =
      "_ZN2at6native12_GLOBAL__N_120softmax_warp_forwardIfffLi10ELb0ELb0EEEvPT0_PKT_iiiPKbib";
  const char* adam =
      "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi4EEENS1_"
      "11AdamFunctorIfLi4EEEJfffffbEEEvT_T0_DpT1_";
  const char* norm = "_Z15layerNormKernelPKfPfS0_S0_ii";

  uint32_t id = 100;
  uint64_t now = 1'000'000;
  for (int iter = 0; iter < 4; ++iter) {
    const uint32_t device = iter % 2;
    // Runtime launch that nests a driver launch: both ids link to the outer stack.
    t.Link(kPid, kPid, id, qkv, "cudaLaunchKernel", now);
    t.Link(kPid, kPid, id + 1, qkv, "cudaLaunchKernel", now);
    t.Kernel(kPid, gemm, id + 1, now + 5'000, now + 905'000, device, 7);
    id += 2;
    t.Link(kPid, kPid, id, softmax, "cudaLaunchKernel", now + 10);
    t.Kernel(kPid, softmax_kernel, id, now + 905'500, now + 1'125'500, device, 7);
    ++id;
    t.Link(kPid, kPid, id, mlp, "cuLaunchKernel", now + 20);
    t.Kernel(kPid, gemm, id, now + 1'126'000, now + 2'326'000, device, 13);
    ++id;
    t.Link(kPid, kPid, id, mlp, "cuLaunchKernel", now + 30);
    t.Kernel(kPid, norm, id, now + 2'326'500, now + 2'401'543, device, 13);
    ++id;
    // One graph launch runs three kernels.
    t.Link(kPid, kPid, id, optimizer, "cudaGraphLaunch", now + 40);
    for (int node = 0; node < 3; ++node) {
      KernelRecord& k = t.Kernel(kPid, adam, id, now + 2'402'000 + node * 60'000,
                                 now + 2'402'000 + node * 60'000 + 55'000, device, 14);
      k.graph_id = 3;
      k.graph_node_id = 30 + node;
    }
    ++id;
    t.Link(kPid, kPid, id, zero_grad, "cudaMemsetAsync", now + 50);
    t.Memset(kPid, id, now + 2'600'000, now + 2'612'000, device, 14);
    ++id;
    // The loader's copy: the driver record carries its own id and the runtime's.
    t.Link(kPid, kLoader, id, loader, "cudaMemcpyAsync", now + 60);
    MemcpyRecord& copy =
        t.Memcpy(kPid, MemcpyKind::kHtoD, id + 1, now + 2'620'000, now + 2'980'000, device, 21);
    copy.runtime_correlation_id = id;
    id += 2;
    now += 3'000'000;
  }
  // The link of this launch was dropped: shown under [unknown launch], not lost.
  t.Kernel(kPid, "_Z13reduce_kernelPfi", 9'000, now, now + 333'333, 0, 7);
  // Unwinding failed for this one: the API and thread are still known.
  t.Link(kPid, kPid, 9'001, 0, "cuLaunchKernel", now);
  t.Kernel(kPid, "_Z13reduce_kernelPfi", 9'001, now + 400'000, now + 512'345, 1, 7);
  // 850 ns: far below the drawing threshold, yet counted in every total.
  t.Link(kPid, kPid, 9'002, softmax, "cudaLaunchKernel", now);
  t.Kernel(kPid, "_Z10tiny_fixupPf", 9'002, now + 600'000, now + 600'850, 0, 7);
  return std::move(t.trace());
}

void WriteTraceFile(const Trace& trace, const std::string& path) {
  auto writer = TraceWriter::Create(path);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  TraceWriter& w = **writer;
  for (size_t id = 1; id < trace.strings.size(); ++id) {
    ASSERT_EQ(w.InternString(trace.strings[id]), id) << "strings must be unique";
  }
  for (size_t id = 1; id < trace.stacks.size(); ++id) {
    if (trace.stacks[id].id == id) w.AddStack(trace.stacks[id]);
  }
  for (const SymbolRecord& symbol : trace.symbols) w.AddSymbol(symbol);
#define GPUPERF_WRITE_ALL(Type, name, plural, number) \
  for (const Type##Record& record : trace.plural) w.Add(record);
  GPUPERF_FIXED_RECORD_TYPES(GPUPERF_WRITE_ALL)
#undef GPUPERF_WRITE_ALL
  Status closed = w.Close();
  ASSERT_TRUE(closed.ok()) << closed.message();
}

}  // namespace gpuperf::testing
