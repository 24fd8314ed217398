#include "analyze/symbols/pytorch_view.h"

#include <gtest/gtest.h>

#include <deque>
#include <string>
#include <vector>

namespace gpuperf {
namespace {

// Frames outermost first, each "function@module" (native), "py:function@file" (Python) or
// "label:text@" (a label gpuperf adds).
class Stack {
 public:
  explicit Stack(const std::vector<std::string>& entries) {
    for (const std::string& entry : entries) {
      const std::string& kept = text_.emplace_back(entry);
      std::string_view view(kept);
      Frame frame;
      if (view.starts_with("py:")) {
        view.remove_prefix(3);
        frame.kind = FrameKind::kPython;
      } else if (view.starts_with("label:")) {
        view.remove_prefix(6);
        frame.kind = FrameKind::kLabel;
      }
      const size_t at = view.find('@');
      frame.function = view.substr(0, at);
      if (frame.kind == FrameKind::kPython) {
        frame.file = view.substr(at + 1);
        frame.line = 10;
      } else {
        frame.module = view.substr(at + 1);
      }
      frames_.push_back(frame);
    }
  }
  // The folded stack as "function" per frame.
  std::vector<std::string> Folded() {
    std::vector<Frame> frames = frames_;
    FoldPyTorchFrames(
        frames, 0, [this](std::string name) { return std::string_view(text_.emplace_back(name)); });
    std::vector<std::string> names;
    for (const Frame& frame : frames) names.emplace_back(frame.function);
    return names;
  }

 private:
  std::deque<std::string> text_;  // owns what the frames view; never moves
  std::vector<Frame> frames_;
};

// An nn.Linear call as an H100 PyTorch trace has it: 24 frames from the Python line to
// cuBLASLt's launch.
TEST(PyTorchView, ALinearCallIsItsModuleItsOpsTheLibraryAndTheLaunch) {
  Stack stack({
      "py:serve@/work/examples/serve.py",
      "py:Module._wrapped_call_impl@/opt/torch/nn/modules/module.py",
      "py:Module._call_impl@/opt/torch/nn/modules/module.py",
      "py:Linear.forward@/opt/torch/nn/modules/linear.py",
      "torch::autograd::THPVariable_linear@libtorch_python.so",
      "at::_ops::linear::call@libtorch_cpu.so",
      "c10::impl::wrap_kernel_functor_unboxed_<...>::call@libtorch_cpu.so",
      "at::native::linear@libtorch_cpu.so",
      "at::native::_flatten_nd_linear@libtorch_cpu.so",
      "at::_ops::addmm::call@libtorch_cpu.so",
      "c10::impl::wrap_kernel_functor_unboxed_<...>::call@libtorch_cpu.so",
      "torch::autograd::VariableType::(anonymous namespace)::addmm@libtorch_cpu.so",
      "at::_ops::addmm::redispatch@libtorch_cpu.so",
      "c10::impl::wrap_kernel_functor_unboxed_<...>::call@libtorch_cuda.so",
      "at::native::structured_addmm_out_cuda::impl@libtorch_cuda.so",
      "at::native::(anonymous namespace)::addmm_out_cuda_impl@libtorch_cuda.so",
      "at::cuda::blas::gemm_and_bias<float>@libtorch_cuda.so",
      "cublasLtMatmul@libcublasLt.so.13",
      "libcublasLt.so.13+0xf8e200@libcublasLt.so.13",
      "libcublasLt.so.13+0xe2b573@libcublasLt.so.13",
      "cuLaunchKernelEx@libcuda.so.1",
      "libcuda.so.1+0x2c1f0@libcuda.so.1",
  });
  EXPECT_EQ(stack.Folded(),
            (std::vector<std::string>{"serve", "Linear.forward", "aten::linear", "aten::addmm",
                                      "cublasLtMatmul", "cuLaunchKernelEx"}));
}

TEST(PyTorchView, ALibraryWithoutSymbolsIsOneFrameNamedForIt) {
  Stack stack({
      "py:Conv2d.forward@/opt/torch/nn/modules/conv.py",
      "at::_ops::cudnn_convolution::call@libtorch_cpu.so",
      "at::native::cudnn_convolution@libtorch_cuda.so",
      "libcudnn_engines_precompiled.so.9+0x10@libcudnn_engines_precompiled.so.9",
      "libcudnn_engines_precompiled.so.9+0x20@libcudnn_engines_precompiled.so.9",
      "cudaLaunchKernel@libcudart.so.13",
  });
  EXPECT_EQ(stack.Folded(), (std::vector<std::string>{"Conv2d.forward", "aten::cudnn_convolution",
                                                      "[libcudnn]", "cudaLaunchKernel"}));
}

TEST(PyTorchView, PlumbingThatLeadsToNoOpIsKept) {
  // A launch from a native implementation reached without an op's entry (a custom kernel
  // called straight from the binding): nothing may vanish without a name in its place.
  Stack stack({
      "py:step@/work/train.py",
      "torch::autograd::THPVariable_custom@libtorch_python.so",
      "at::native::launch_custom@libtorch_cuda.so",
      "cudaLaunchKernel@libcudart.so.13",
  });
  EXPECT_EQ(stack.Folded(),
            (std::vector<std::string>{"step", "torch::autograd::THPVariable_custom",
                                      "at::native::launch_custom", "cudaLaunchKernel"}));
}

TEST(PyTorchView, BackwardNodesStayAndTheirOpsFold) {
  Stack stack({
      "torch::autograd::Engine::thread_main@libtorch_cpu.so",
      "torch::autograd::generated::MmBackward0::apply@libtorch_cpu.so",
      "at::_ops::mm::call@libtorch_cpu.so",
      "c10::impl::wrap_kernel_functor_unboxed_<...>::call@libtorch_cpu.so",
      "at::_ops::mm::redispatch@libtorch_cpu.so",
      "at::native::structured_mm_out_cuda::impl@libtorch_cuda.so",
      "cublasGemmEx@libcublas.so.13",
      "libcublasLt.so.13+0x1@libcublasLt.so.13",
      "cuLaunchKernel@libcuda.so.1",
  });
  EXPECT_EQ(stack.Folded(), (std::vector<std::string>{"MmBackward0", "aten::mm", "cublasGemmEx",
                                                      "[libcublasLt]", "cuLaunchKernel"}));
}

TEST(PyTorchView, ABackwardTowerIsItsForwardLineTheNodeAndItsOps) {
  Stack stack({
      "py:Linear.forward@/opt/torch/nn/modules/linear.py",
      "label:[autograd backward]@",
      "libc.so.6+0x129ecc@libc.so.6",
      "libstdc++.so.6+0xecdb4@libstdc++.so.6",
      "torch::autograd::python::PythonEngine::thread_init@libtorch_python.so",
      "torch::autograd::Engine::thread_main@libtorch_cpu.so",
      "torch::autograd::Node::operator()@libtorch_cpu.so",
      "torch::autograd::generated::AddmmBackward0::apply@libtorch_cpu.so",
      "torch::autograd::generated::AddmmBackward0_apply_functional@libtorch_cpu.so",
      "torch::autograd::generated::details::mm_mat1_backward@libtorch_cpu.so",
      "at::_ops::mm::call@libtorch_cpu.so",
      "cublasSgemm_v2@libcublas.so.13",
      "cuLaunchKernel@libcuda.so.1",
  });
  EXPECT_EQ(stack.Folded(),
            (std::vector<std::string>{"Linear.forward", "[autograd backward]", "AddmmBackward0",
                                      "aten::mm", "cublasSgemm_v2", "cuLaunchKernel"}));
}

TEST(PyTorchView, StacksThatNeverPassThroughPyTorchStayAsTheyWere) {
  Stack stack({
      "main@gemm",
      "cublasGemmEx@libcublas.so.13",
      "libcublas.so.13+0x10@libcublas.so.13",
      "cudaLaunchKernel@libcudart.so.13",
  });
  EXPECT_EQ(stack.Folded(), (std::vector<std::string>{"main", "cublasGemmEx",
                                                      "libcublas.so.13+0x10", "cudaLaunchKernel"}));
}

TEST(PyTorchView, ModuleWrappersGoOnlyFromTorchsOwnModuleFile) {
  Stack stack({
      "py:Module._call_impl@/work/mylib/module.py",  // a user's class of the same name
      "py:Module._call_impl@/opt/torch/nn/modules/module.py",
      "py:Block.forward@/work/model.py",
      "at::_ops::relu::call@libtorch_cpu.so",
  });
  EXPECT_EQ(stack.Folded(),
            (std::vector<std::string>{"Module._call_impl", "Block.forward", "aten::relu"}));
}

TEST(PyTorchView, OpNamesComeOnlyFromTheEntryPoints) {
  Frame frame;
  frame.module = "libtorch_cpu.so";
  frame.function = "at::_ops::add_Tensor::call";
  EXPECT_EQ(ClassifyTorchFrame(frame).op, "add_Tensor");
  frame.function = "at::_ops::add_Tensor::redispatch(c10::DispatchKeySet, at::Tensor const&)";
  EXPECT_EQ(ClassifyTorchFrame(frame).op, "add_Tensor");
  frame.function = "at::_ops::add_Tensor::typed_handle";
  EXPECT_EQ(ClassifyTorchFrame(frame).role, TorchFrameRole::kOpPlumbing);
  frame.function = "at::_ops::callback::caller";  // "call" must be the whole word
  EXPECT_EQ(ClassifyTorchFrame(frame).role, TorchFrameRole::kOpPlumbing);
}

}  // namespace
}  // namespace gpuperf
