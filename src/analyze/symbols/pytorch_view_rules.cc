// The PyTorch view's table of frame patterns (pytorch_view.h), checked on the recorded
// PyTorch fixtures (tests/data/*/pytorch_*; pytorch_view_test.cc). Written against PyTorch 2.x
// (libtorch 2.5 to 2.9 frame names): when a release renames its plumbing, edit here.
#include <span>
#include <string_view>

#include "analyze/symbols/pytorch_view.h"

namespace gpuperf {
namespace {

// Python frames of nn.Module's call machinery (torch/nn/modules/module.py).
constexpr std::string_view kModuleWrappers[] = {
    "Module._wrapped_call_impl",
    "Module._call_impl",
};
constexpr std::string_view kModuleFile = "torch/nn/modules/module.py";

// Native frames between a Python call and the op's CUDA work that a user never wrote: the
// Python binding, the dispatcher and its boxing wrappers, autograd's and ADInplaceOrView's
// kernels, functionalization, and the op's native implementation.
// Autograd's backward nodes (torch::autograd::generated::MmBackward0::apply) are not here:
// they name what a backward kernel belongs to, as torch.profiler shows them. The engine that
// runs them is.
constexpr std::string_view kPlumbingPrefixes[] = {
    "torch::autograd::THPVariable_",
    "torch::autograd::dispatch_",
    "torch::autograd::Engine::",
    "torch::autograd::python::PythonEngine::",
    "torch::autograd::Node::",
    "torch::autograd::call_function",
    "torch::autograd::generated::",  // what is not a node's apply (its _apply_functional)
    "torch::autograd::autogradNotImplemented",
    "torch::autograd::TypeError_to_NotImplemented_",
    "torch::autograd::VariableType::",
    "torch::autograd::impl::",
    "torch::ADInplaceOrView::",
    "torch::TraceType::",
    "torch::python_",
    "c10::impl::",
    "c10::Dispatcher::",
    "c10::KernelFunction::",
    "c10::BoxedKernel::",
    "c10::OperatorHandle::",
    "at::native::",
    "at::cuda::",
    "at::meta::",
    "at::impl::",
    "at::functionalization::",
    "at::(anonymous namespace)::",
    "at::_ops::",  // what is not an op's call or redispatch (e.g. ::typed_handle)
    "at::Tensor::",
    "at::",
    "void at::",
};

// Names with a return type first ("_object* torch::autograd::TypeError_to_NotImplemented_<
// &torch::autograd::THPVariable_add>(...)"): plumbing wherever these appear in them.
constexpr std::string_view kPlumbingInfixes[] = {
    "torch::autograd::TypeError_to_NotImplemented_",
    "torch::autograd::THPVariable_",
};

constexpr std::string_view kBackwardNodePrefix = "torch::autograd::generated::";

// Libraries whose frames fold into their entry point, by the start of the module's file name.
constexpr std::string_view kLibraries[] = {
    "libcublasLt", "libcublas",   "libcudnn",    "libnccl",  "libcufft",
    "libcurand",   "libcusparse", "libcusolver", "libnvrtc", "libnvJitLink",
};
constexpr std::string_view kCudaRuntimes[] = {"libcudart", "libcuda."};

// The Python files and native modules that make a stack a PyTorch one.
constexpr std::string_view kTorchModulePrefix = "libtorch";
constexpr std::string_view kTorchPythonDir = "torch/";

bool StartsWithAny(std::string_view text, std::span<const std::string_view> prefixes) {
  for (std::string_view prefix : prefixes) {
    if (text.starts_with(prefix)) return true;
  }
  return false;
}

// "at::_ops::linear::call" / "at::_ops::addmm::redispatch" -> "linear" / "addmm"; the
// overload's name is part of the struct's (at::_ops::add_Tensor::call -> "add_Tensor").
std::string_view OpOfEntry(std::string_view function) {
  constexpr std::string_view kOps = "at::_ops::";
  if (!function.starts_with(kOps)) return {};
  std::string_view rest = function.substr(kOps.size());
  const size_t colons = rest.find("::");
  if (colons == std::string_view::npos || colons == 0) return {};
  const std::string_view what = rest.substr(colons + 2);
  // Only the entry points; their arguments may follow in a demangled name.
  if (!what.starts_with("call") && !what.starts_with("redispatch")) return {};
  const std::string_view tail = what.substr(what.starts_with("call") ? 4 : 10);
  if (!tail.empty() && tail.front() != '(') return {};
  return rest.substr(0, colons);
}

// "torch::autograd::generated::AddmmBackward0::apply" -> "AddmmBackward0"; empty for the
// namespace's other functions (AddmmBackward0_apply_functional, details::...).
std::string_view BackwardNodeOf(std::string_view function) {
  if (!function.starts_with(kBackwardNodePrefix)) return {};
  const std::string_view rest = function.substr(kBackwardNodePrefix.size());
  const size_t colons = rest.find("::");
  if (colons == std::string_view::npos || colons == 0) return {};
  const std::string_view what = rest.substr(colons + 2);
  if (!what.starts_with("apply")) return {};
  const std::string_view tail = what.substr(5);
  if (!tail.empty() && tail.front() != '(') return {};
  return rest.substr(0, colons);
}

bool ContainsAny(std::string_view text, std::span<const std::string_view> parts) {
  for (std::string_view part : parts) {
    if (text.find(part) != std::string_view::npos) return true;
  }
  return false;
}

std::string_view LibraryOf(std::string_view module, std::span<const std::string_view> libraries) {
  for (std::string_view library : libraries) {
    if (module.starts_with(library)) {
      // "libcuda." names libcuda.so.1; the others are whole names.
      return library.ends_with('.') ? library.substr(0, library.size() - 1) : library;
    }
  }
  return {};
}

}  // namespace

TorchFrameClass ClassifyTorchFrame(const Frame& frame) {
  TorchFrameClass out;
  if (frame.kind == FrameKind::kPython) {
    for (std::string_view wrapper : kModuleWrappers) {
      if (frame.function == wrapper && frame.file.ends_with(kModuleFile)) {
        out.role = TorchFrameRole::kModuleWrapper;
      }
    }
    return out;
  }
  if (frame.kind != FrameKind::kNative) return out;
  // Modules are paths in some traces, base names in others.
  const std::string_view module = FileBaseName(frame.module);
  if (std::string_view library = LibraryOf(module, kCudaRuntimes); !library.empty()) {
    out.role = TorchFrameRole::kCudaRuntime;
    out.library = library;
    return out;
  }
  if (std::string_view library = LibraryOf(module, kLibraries); !library.empty()) {
    out.role = TorchFrameRole::kLibrary;
    out.library = library;
    return out;
  }
  if (std::string_view op = OpOfEntry(frame.function); !op.empty()) {
    out.role = TorchFrameRole::kOpEntry;
    out.op = op;
    return out;
  }
  if (!module.starts_with(kTorchModulePrefix)) return out;
  if (std::string_view node = BackwardNodeOf(frame.function); !node.empty()) {
    out.role = TorchFrameRole::kBackwardNode;
    out.op = node;
  } else if (StartsWithAny(frame.function, kPlumbingPrefixes) ||
             ContainsAny(frame.function, kPlumbingInfixes)) {
    out.role = TorchFrameRole::kOpPlumbing;
  }
  return out;
}

bool IsTorchStack(const std::vector<Frame>& frames, size_t from) {
  for (size_t i = from; i < frames.size(); ++i) {
    const Frame& frame = frames[i];
    if (frame.kind == FrameKind::kNative &&
        FileBaseName(frame.module).starts_with(kTorchModulePrefix)) {
      return true;
    }
    if (frame.kind == FrameKind::kPython &&
        frame.file.find(kTorchPythonDir) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace gpuperf
