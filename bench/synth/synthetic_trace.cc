#include "synth/synthetic_trace.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gpuperf/stats.h"

namespace gpuperf::synth {
namespace {

// xorshift64*: deterministic across platforms, so traces are reproducible.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return state_ * 0x2545F4914F6CDD1Dull;
  }
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : Next() % n; }

 private:
  uint64_t state_;
};

const char* const kKernelStems[] = {
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_"
    "T1_",
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_"
    "13BinaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEEEEvRNS_18TensorIteratorBaseERKT_"
    "EUliE_EEviT1_",
    "_ZN2at6native43_GLOBAL__N__softmax_warp_forwardIfffLi10ELb0ELb0EEEvPT0_PKT_iiiPKbib",
    "_ZN2at6native12_GLOBAL__N_119RowwiseMomentsCUDAKernelIfEEvlT_PKS3_PS3_S6_",
    "_ZN2at6native12_GLOBAL__N_126LayerNormForwardCUDAKernelIffEEvlPKT_PKT0_S8_S5_S5_PS3_",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
    "segment_k_off_kernel__5x_cublas",
    "ampere_sgemm_128x64_tn",
    "_Z17attentionQKTKernelPKfS0_Pfiii",
    "_Z13softmaxKernelPfii",
    "_Z15layerNormKernelPKfPfS0_S0_ii",
    "_Z14residualAddPfPKfi",
    "_ZN7cutlass7Kernel2I68cutlass_80_tensorop_s16816gemm_relu_f16_64x64_32x6_tn_align8EEvNT_"
    "6ParamsE",
    "flash_fwd_kernel",
    "triton_poi_fused_add_mul_0",
    "triton_red_fused_native_layer_norm_1",
};

const char* const kFrameNames[] = {
    "_start",
    "__libc_start_main",
    "main",
    "Py_RunMain",
    "_PyEval_EvalFrameDefault",
    "PyObject_Call",
    "torch::autograd::THPVariable_matmul",
    "at::_ops::matmul::call",
    "at::native::matmul",
    "at::_ops::mm::call",
    "at::native::structured_mm_out_cuda::impl",
    "at::cuda::blas::gemm<float>",
    "cublasLtMatmul",
    "model::TransformerBlock::forward",
    "model::Attention::forward",
    "model::Attention::softmax",
    "model::MLP::forward",
    "model::LayerNorm::forward",
    "at::native::layer_norm_cuda",
    "at::native::softmax_cuda",
    "at::native::add_kernel",
    "at::native::gpu_kernel_impl",
    "Engine::run_step",
    "Engine::decode",
    "Scheduler::step",
    "std::function<void()>::operator()",
    "c10::impl::wrap_kernel_functor_unboxed_",
    "at::TensorIteratorBase::for_each",
    "launch_vectorized_kernel",
    "cudaLaunchKernel",
};

constexpr uint64_t kModuleBase = 0x7f0000000000ull;
constexpr uint64_t kFrameStride = 0x1000;

}  // namespace

void WriteSynthetic(TraceWriter& writer, const SyntheticOptions& o) {
  Rng rng(o.seed);
  const uint32_t pid = o.pid;
  ProcessRecord process;
  process.pid = pid;
  process.parent_pid = 1;
  process.command = writer.InternString("python3 synthetic_model.py --steps 1000");
  process.hostname = writer.InternString("synthetic-host");
  process.gpuperf_version = writer.InternString("synthetic");
  process.start_ns = 1'000'000'000;

  if (o.rank >= 0) {
    RankRecord rank;
    rank.pid = pid;
    rank.rank = o.rank;
    rank.local_rank = o.rank;
    rank.world_size = o.world_size;
    rank.local_world_size = o.world_size;
    rank.node_rank = 0;
    rank.launcher = writer.InternString("torchrun");
    rank.job_id = writer.InternString("synthetic-job");
    rank.boot_id = writer.InternString("00000000-0000-4000-8000-000000000000");
    writer.Add(rank);
  }
  for (uint32_t d = 0; d < o.devices; ++d) {
    DeviceRecord device;
    device.pid = pid;
    device.device_id = d;
    device.name = writer.InternString("NVIDIA H100 80GB HBM3");
    device.compute_major = 9;
    device.sm_count = 132;
    device.warp_size = 32;
    device.max_threads_per_block = 1024;
    device.max_warps_per_sm = 64;
    device.max_blocks_per_sm = 32;
    device.max_registers_per_block = 65536;
    device.max_registers_per_sm = 65536;
    device.max_shared_per_block = 227 * 1024;
    device.max_shared_per_sm = 228 * 1024;
    device.global_memory_bytes = 80ull << 30;
    device.core_clock_khz = 1980000;
    writer.Add(device);
    writer.Add(ContextRecord{pid, d + 1, d, 7, 0});
  }
  for (uint32_t t = 0; t < o.threads; ++t) {
    writer.Add(ThreadRecord{pid, pid + t, writer.InternString("worker-" + std::to_string(t))});
  }

  // Module and symbols: every frame name is one "function" of a fake libmodel.so.
  const size_t frame_count = std::size(kFrameNames);
  StringId module_path = writer.InternString("/opt/model/libmodel.so");
  writer.Add(ModuleRecord{pid, module_path, writer.InternString("0123456789abcdef"), kModuleBase,
                          kModuleBase, kModuleBase + frame_count * kFrameStride + kFrameStride});

  // Unique stacks: a common prefix, then a random walk through the frame names.
  std::vector<uint64_t> used_pcs;
  for (uint32_t s = 1; s <= o.unique_stacks; ++s) {
    StackRecord stack;
    stack.pid = pid;
    stack.id = s;
    uint32_t depth = o.min_stack_depth +
                     static_cast<uint32_t>(rng.Below(o.max_stack_depth - o.min_stack_depth + 1));
    for (uint32_t i = 0; i < depth; ++i) {
      size_t frame = i < 3 ? i : 3 + rng.Below(frame_count - 3);
      // Each (frame, call site) is a distinct PC inside that function.
      uint64_t pc = kModuleBase + frame * kFrameStride + 0x10 + 8 * rng.Below(4);
      stack.pcs.push_back(pc);
      used_pcs.push_back(pc);
    }
    std::reverse(stack.pcs.begin(), stack.pcs.end());  // innermost first
    writer.AddStack(stack);
  }
  if (o.symbols) {
    std::sort(used_pcs.begin(), used_pcs.end());
    used_pcs.erase(std::unique(used_pcs.begin(), used_pcs.end()), used_pcs.end());
    for (uint64_t pc : used_pcs) {
      size_t frame = (pc - kModuleBase) / kFrameStride;
      SymbolRecord symbol;
      symbol.pid = pid;
      symbol.pc = pc;
      symbol.frames.push_back({writer.InternString(kFrameNames[frame]),
                               writer.InternString("model.cc"), static_cast<uint32_t>(100 + frame),
                               module_path, pc - kModuleBase});
      writer.AddSymbol(symbol);
    }
  }

  std::vector<StringId> names;
  for (uint32_t i = 0; i < o.kernel_names; ++i) {
    std::string name = kKernelStems[i % std::size(kKernelStems)];
    if (i >= std::size(kKernelStems)) name += "_v" + std::to_string(i / std::size(kKernelStems));
    names.push_back(writer.InternString(name));
  }
  const StringId launch_name = writer.InternString("cudaLaunchKernel");
  const StringId memcpy_name = writer.InternString("cudaMemcpyAsync");

  std::vector<uint64_t> stream_free(o.devices * o.streams_per_device, process.start_ns);
  uint64_t cpu_now = process.start_ns;
  uint32_t correlation = 1;
  for (uint64_t k = 0; k < o.kernels; ++k) {
    const uint32_t tid = pid + static_cast<uint32_t>(k % o.threads);
    const uint32_t device = static_cast<uint32_t>((k / 7) % o.devices);
    const uint32_t stream_index = static_cast<uint32_t>(rng.Below(o.streams_per_device));
    uint64_t& free_at = stream_free[device * o.streams_per_device + stream_index];

    ApiRecord api;
    api.pid = pid;
    api.tid = tid;
    api.domain = ApiDomain::kRuntime;
    api.callback_id = 211;
    api.name = launch_name;
    api.start_ns = cpu_now;
    api.end_ns = cpu_now + 2500 + rng.Below(2000);
    api.correlation_id = correlation;
    if (o.api_records) writer.Add(api);
    // Zipf-like: a few names and stacks dominate, as in real models.
    const uint64_t r = rng.Below(1000);
    const uint32_t name_index = static_cast<uint32_t>((r * r / 1000) * o.kernel_names / 1000);
    writer.Add(LaunchLinkRecord{
        pid, tid, correlation,
        1 + static_cast<StackId>((name_index * 7 + rng.Below(3)) % o.unique_stacks), launch_name,
        api.start_ns});
    KernelRecord kernel;
    kernel.pid = pid;
    kernel.name = names[name_index];
    kernel.device_id = device;
    kernel.context_id = device + 1;
    kernel.stream_id = 7 + stream_index;
    kernel.start_ns = std::max(free_at, api.end_ns + 1000) + rng.Below(500);
    kernel.end_ns = kernel.start_ns + 1500 + (name_index % 10) * 4000 + rng.Below(3000);
    kernel.grid_x = 1u << (name_index % 12);
    kernel.grid_y = 1;
    kernel.grid_z = 1;
    kernel.block_x = 128u << (name_index % 3);
    kernel.block_y = 1;
    kernel.block_z = 1;
    kernel.registers_per_thread = 32 + 8 * (name_index % 8);
    kernel.static_shared_bytes = (name_index % 4) * 4096;
    kernel.correlation_id = correlation;
    writer.Add(kernel);
    free_at = kernel.end_ns;
    ++correlation;
    cpu_now = api.end_ns + 200 + rng.Below(800);

    if (o.memcpy_every && k % o.memcpy_every == 0) {
      MemcpyRecord copy;
      copy.pid = pid;
      copy.kind = (k / o.memcpy_every) % 2 ? MemcpyKind::kDtoH : MemcpyKind::kHtoD;
      copy.src_kind = copy.kind == MemcpyKind::kHtoD ? MemoryKind::kPinned : MemoryKind::kDevice;
      copy.dst_kind = copy.kind == MemcpyKind::kHtoD ? MemoryKind::kDevice : MemoryKind::kPinned;
      copy.bytes = 4096ull << rng.Below(10);
      copy.device_id = device;
      copy.context_id = device + 1;
      copy.stream_id = kernel.stream_id;
      copy.start_ns = free_at + 300;
      copy.end_ns = copy.start_ns + 1000 + copy.bytes / 20;
      copy.correlation_id = correlation;
      free_at = copy.end_ns;
      ApiRecord copy_api = api;
      copy_api.callback_id = 41;
      copy_api.name = memcpy_name;
      copy_api.start_ns = cpu_now;
      copy_api.end_ns = cpu_now + 3000;
      copy_api.correlation_id = correlation;
      if (o.api_records) writer.Add(copy_api);
      writer.Add(LaunchLinkRecord{pid, tid, correlation,
                                  1 + static_cast<StackId>(rng.Below(o.unique_stacks)), memcpy_name,
                                  copy_api.start_ns});
      writer.Add(copy);
      ++correlation;
      cpu_now = copy_api.end_ns + 500;
    }
  }
  uint64_t end = cpu_now;
  for (uint64_t t : stream_free) end = std::max(end, t);
  process.end_ns = end + 1000;
  writer.Add(process);
  writer.Add(ClockRecord{pid, process.start_ns, 1'760'000'000'000'000'000ull});
  writer.Add(StatRecord{pid, static_cast<uint32_t>(StatId::cupti_dropped_records), 0});
}

Status WriteSyntheticTrace(const std::string& path, const SyntheticOptions& options) {
  auto writer = TraceWriter::Create(path);
  if (!writer.ok()) return writer.status();
  WriteSynthetic(**writer, options);
  return (*writer)->Close();
}

}  // namespace gpuperf::synth
