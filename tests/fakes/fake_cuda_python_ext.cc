// _gpuperf_fakecuda: a CPython extension that plays a CUDA library for the launch-stack test
// (tests/python/launch_stacks_test.sh): it "launches" kernels through the fake libcupti.so.13
// (this directory), so gpuperf's injection library sees launch callbacks on Python's threads.
//
//   init()                        what cuInit does: loads CUDA_INJECTION64_PATH, runs
//                                 InitializeInjection, creates a device, context and stream
//   launch(name)                  cudaLaunchKernel with the GIL released, as PyTorch does,
//                                 then the kernel's activity record
//   launch_from_native_thread(n[, thread_name])
//                                 the same from a thread the interpreter never saw
//   malloc(bytes)                 cudaMalloc, never freed (a leak with its stack)
//   synchronize()                 cudaDeviceSynchronize
//   load_torch(path)              loads the fake libtorch_cpu.so (fake_torch.cc); before init()
//   op(forward, backward)         an autograd op: a node, then the kernel `forward` launched
//   view_op(backward)             an autograd op that creates its node and launches nothing
//   backward()                    the engine, on a native thread named pt_autograd_0: a node
//                                 of its own (AccumulateGrad-like) launches, then every op's
//                                 node since the last call, newest first, launches its
//                                 `backward` kernel; returns the most references any node
//                                 had once its backward ended (1: gpuperf kept none)
//
// Built against the limited API of 3.10 (one build for every supported interpreter).
#define PY_SSIZE_T_CLEAN
#define Py_LIMITED_API 0x030a0000
#include <Python.h>
#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "fake_cupti/fake_cupti.h"

namespace {

constexpr uint32_t kDevice = 0;
constexpr uint32_t kStreamId = 7;
uint32_t g_context = 0;
CUstream g_stream = nullptr;
std::atomic<uint64_t> g_gpu_busy_until{0};

// The GPU ran the kernel: back to back on the one stream, 3 µs each.
void EmitKernel(uint32_t correlation_id, const char* name) {
  const uint64_t start = std::max(fake_cupti_now(), g_gpu_busy_until.load()) + 500;
  FakeCuptiKernel kernel{.correlation_id = correlation_id,
                         .name = name,
                         .device_id = kDevice,
                         .context_id = g_context,
                         .stream_id = kStreamId,
                         .start = start,
                         .end = start + 3000};
  g_gpu_busy_until.store(kernel.end);  // launches are serialized by the test
  fake_cupti_emit_kernel(&kernel);
}

// The library's launch entry point: its frame is the native frame right under the Python
// caller in the recorded stacks.
__attribute__((noinline)) void FakeCudaLaunchKernel(const char* name) {
  FakeCuptiApiFrame frame;
  const uint32_t id =
      fake_cupti_api_enter(&frame, CUPTI_CB_DOMAIN_RUNTIME_API,
                           CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, name, nullptr);
  fake_cupti_api_exit(&frame, cudaSuccess);
  EmitKernel(id, name);
  asm volatile("" ::: "memory");  // no tail call: keep this frame on the stack
}

PyObject* Init(PyObject*, PyObject*) {
  if (g_context != 0) Py_RETURN_NONE;
  const char* path = getenv("CUDA_INJECTION64_PATH");
  if (path != nullptr && *path != '\0') {
    void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      PyErr_Format(PyExc_RuntimeError, "cannot load %s: %s", path, dlerror());
      return nullptr;
    }
    auto init = reinterpret_cast<int (*)()>(dlsym(handle, "InitializeInjection"));
    if (init == nullptr || init() == 0) {
      PyErr_Format(PyExc_RuntimeError, "%s: InitializeInjection failed", path);
      return nullptr;
    }
  }
  fake_cupti_cu_init_finished();
  fake_cupti_emit_device(kDevice, "NVIDIA H100 80GB HBM3 (fake)");
  g_context = fake_cupti_create_context(kDevice);
  g_stream = fake_cupti_create_stream(g_context, kStreamId);
  Py_RETURN_NONE;
}

PyObject* Launch(PyObject*, PyObject* args) {
  const char* name = nullptr;
  if (!PyArg_ParseTuple(args, "s", &name)) return nullptr;
  std::string kernel(name);  // the argument's buffer needs the GIL
  Py_BEGIN_ALLOW_THREADS FakeCudaLaunchKernel(kernel.c_str());
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

PyObject* LaunchFromNativeThread(PyObject*, PyObject* args) {
  const char* name = nullptr;
  const char* thread_name = "native";
  if (!PyArg_ParseTuple(args, "s|s", &name, &thread_name)) return nullptr;
  std::string kernel(name), thread(thread_name);
  Py_BEGIN_ALLOW_THREADS std::thread([&] {
    pthread_setname_np(pthread_self(), thread.substr(0, 15).c_str());
    FakeCudaLaunchKernel(kernel.c_str());
  }).join();
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

// cudaMalloc, never freed: the report lists it with its allocating stack.
__attribute__((noinline)) void FakeCudaMalloc(uint64_t bytes) {
  FakeCuptiApiFrame frame;
  const uint32_t id =
      fake_cupti_api_enter(&frame, CUPTI_CB_DOMAIN_RUNTIME_API,
                           CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, nullptr, nullptr);
  fake_cupti_api_exit(&frame, cudaSuccess);
  fake_cupti_emit_memory(id, CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION,
                         CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 0x7f0000000000ull, bytes, kDevice,
                         g_context, fake_cupti_now());
  asm volatile("" ::: "memory");
}

PyObject* Malloc(PyObject*, PyObject* args) {
  unsigned long long bytes = 0;
  if (!PyArg_ParseTuple(args, "K", &bytes)) return nullptr;
  Py_BEGIN_ALLOW_THREADS FakeCudaMalloc(bytes);
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

PyObject* Synchronize(PyObject*, PyObject*) {
  Py_BEGIN_ALLOW_THREADS fake_cupti_api_call(
      CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, nullptr);
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

// The fake libtorch's test hooks (fake_torch.cc), once load_torch found them.
struct FakeTorch {
  size_t (*new_node)() = nullptr;
  void (*enter_node)(size_t) = nullptr;
  void (*enter_engine_node)() = nullptr;
  void (*leave_node)() = nullptr;
  long (*node_references)(size_t) = nullptr;
} g_torch;
struct PendingBackward {
  size_t node;
  std::string kernel;
};
std::vector<PendingBackward> g_pending_backward;

PyObject* LoadTorch(PyObject*, PyObject* args) {
  const char* path = nullptr;
  if (!PyArg_ParseTuple(args, "s", &path)) return nullptr;
  void* torch = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (torch == nullptr) {
    PyErr_Format(PyExc_RuntimeError, "cannot load %s: %s", path, dlerror());
    return nullptr;
  }
  g_torch.new_node = reinterpret_cast<size_t (*)()>(dlsym(torch, "fake_torch_new_node"));
  g_torch.enter_node = reinterpret_cast<void (*)(size_t)>(dlsym(torch, "fake_torch_enter_node"));
  g_torch.enter_engine_node =
      reinterpret_cast<void (*)()>(dlsym(torch, "fake_torch_enter_engine_node"));
  g_torch.leave_node = reinterpret_cast<void (*)()>(dlsym(torch, "fake_torch_leave_node"));
  g_torch.node_references =
      reinterpret_cast<long (*)(size_t)>(dlsym(torch, "fake_torch_node_references"));
  if (g_torch.new_node == nullptr || g_torch.enter_node == nullptr ||
      g_torch.enter_engine_node == nullptr || g_torch.leave_node == nullptr ||
      g_torch.node_references == nullptr) {
    PyErr_Format(PyExc_RuntimeError, "%s is not the fake libtorch", path);
    return nullptr;
  }
  Py_RETURN_NONE;
}

// An autograd op: its node first (as PyTorch's autograd kernels do), then its kernel, if any.
PyObject* AutogradOp(const char* forward, const char* backward) {
  if (g_torch.new_node == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "load_torch first");
    return nullptr;
  }
  std::string forward_kernel(forward != nullptr ? forward : ""), backward_kernel(backward);
  Py_BEGIN_ALLOW_THREADS g_pending_backward.push_back({g_torch.new_node(), backward_kernel});
  if (!forward_kernel.empty()) FakeCudaLaunchKernel(forward_kernel.c_str());
  Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

PyObject* Op(PyObject*, PyObject* args) {
  const char *forward = nullptr, *backward = nullptr;
  if (!PyArg_ParseTuple(args, "ss", &forward, &backward)) return nullptr;
  return AutogradOp(forward, backward);
}

PyObject* ViewOp(PyObject*, PyObject* args) {
  const char* backward = nullptr;
  if (!PyArg_ParseTuple(args, "s", &backward)) return nullptr;
  return AutogradOp(nullptr, backward);
}

PyObject* Backward(PyObject*, PyObject*) {
  if (g_torch.new_node == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "load_torch first");
    return nullptr;
  }
  long most_references = 0;
  std::vector<PendingBackward> pending;
  pending.swap(g_pending_backward);
  Py_BEGIN_ALLOW_THREADS std::thread([&] {
    pthread_setname_np(pthread_self(), "pt_autograd_0");
    g_torch.enter_engine_node();
    FakeCudaLaunchKernel("_Z10accumulatev");
    g_torch.leave_node();
    for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
      g_torch.enter_node(it->node);
      FakeCudaLaunchKernel(it->kernel.c_str());
      g_torch.leave_node();
      most_references = std::max(most_references, g_torch.node_references(it->node));
    }
  }).join();
  Py_END_ALLOW_THREADS return PyLong_FromLong(most_references);
}

PyMethodDef kMethods[] = {
    {"init", Init, METH_NOARGS, "load the injection library and create a context"},
    {"launch", Launch, METH_VARARGS, "launch(kernel_name): a cudaLaunchKernel, GIL released"},
    {"launch_from_native_thread", LaunchFromNativeThread, METH_VARARGS,
     "launch_from_native_thread(kernel_name[, thread_name]): the same from a thread without "
     "Python"},
    {"malloc", Malloc, METH_VARARGS, "malloc(bytes): a cudaMalloc that is never freed"},
    {"synchronize", Synchronize, METH_NOARGS, "cudaDeviceSynchronize"},
    {"load_torch", LoadTorch, METH_VARARGS, "load_torch(path): the fake libtorch_cpu.so"},
    {"op", Op, METH_VARARGS, "op(forward_kernel, backward_kernel): an autograd op"},
    {"view_op", ViewOp, METH_VARARGS, "view_op(backward_kernel): an op that launches nothing"},
    {"backward", Backward, METH_NOARGS, "run the pending ops' backward on pt_autograd_0"},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef kModule = {.m_base = PyModuleDef_HEAD_INIT,
                       .m_name = "_gpuperf_fakecuda",
                       .m_size = -1,
                       .m_methods = kMethods};

}  // namespace

PyMODINIT_FUNC PyInit__gpuperf_fakecuda() {
  return PyModule_Create(&kModule);
}
