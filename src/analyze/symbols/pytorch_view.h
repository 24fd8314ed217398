// The PyTorch view of a launch stack (issue 35): the frames a PyTorch user wrote and can act
// on, instead of the dispatcher's plumbing. Applied where a stack becomes display frames
// (SymbolTable::ResolveStack), so the flame graph, pprof, the timeline's stack annotations and
// the report's stack listings all show the same; `--native-detail` keeps every frame.
//
// Only stacks that pass through PyTorch (a frame of libtorch*, or of torch/nn/modules) are
// changed, and only their frames: weights and totals stay what they were. Folds, in order:
//   - an nn.Module call's `Module._wrapped_call_impl` / `Module._call_impl` pair goes: the
//     module's own `forward` frame under it names the module;
//   - the ATen dispatcher chain of one op becomes one frame named as PyTorch names the op
//     (`at::_ops::linear::call` -> `aten::linear`); an op called from inside another stays
//     nested (`aten::linear` -> `aten::addmm`); the Python binding, boxing wrappers, autograd
//     and the native implementation between them go;
//   - a backward kernel's tower, under `[autograd backward]`: the engine's thread and calls go,
//     the autograd node stays as PyTorch names it (`AddmmBackward0`), then its ops;
//   - the frames of a math or communication library (cuBLAS, cuBLASLt, cuDNN, NCCL, ...) from
//     where PyTorch calls it become one frame, the library's entry point (`cublasLtMatmul`)
//     or `[libcublasLt]` when none of its frames has a symbol;
//   - CUDA's runtime and driver beneath them likewise become their entry point
//     (`cudaLaunchKernel`).
// The patterns live in one table (pytorch_view_rules.cc): a new PyTorch release that renames
// its plumbing is one edit there.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/symbols/symbol_table.h"

namespace gpuperf {

// What the table says a frame is.
enum class TorchFrameRole : uint8_t {
  kUser,           // anything else: kept
  kModuleWrapper,  // Module._wrapped_call_impl, Module._call_impl: dropped
  kOpEntry,        // at::_ops::<op>::call / ::redispatch: becomes aten::<op>
  kOpPlumbing,     // dispatcher, binding, boxing, autograd, native impl: folded into its op
  kBackwardNode,   // torch::autograd::generated::<Node>::apply: becomes <Node>
  kLibrary,        // a math/communication library: the run folds into its entry point
  kCudaRuntime,    // libcudart / libcuda: the run folds into its entry point
};

struct TorchFrameClass {
  TorchFrameRole role = TorchFrameRole::kUser;
  std::string_view op;       // kOpEntry: the op's name ("linear"); kBackwardNode: the node's
  std::string_view library;  // kLibrary, kCudaRuntime: "libcublasLt"
};

// Looks `frame` up in the rules table.
TorchFrameClass ClassifyTorchFrame(const Frame& frame);
// Whether a stack passes through PyTorch (only those are folded).
bool IsTorchStack(const std::vector<Frame>& frames, size_t from);

// Folds frames [from, end) of `frames` (outermost first) in place. `intern` keeps the text of
// a new frame name alive as long as the frames are used.
void FoldPyTorchFrames(std::vector<Frame>& frames, size_t from,
                       const std::function<std::string_view(std::string)>& intern);

}  // namespace gpuperf
