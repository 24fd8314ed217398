// libtorch_cpu.so, as far as gpuperf's autograd link (src/inject/torch/autograd_link.h) sees
// it: the three entry points it calls, under PyTorch's own names, and autograd nodes laid
// out as PyTorch 2.x lays them out (vtable, enable_shared_from_this, sequence_nr_,
// topological_nr_, has_parent_, thread_id_). The test extension (fake_cuda_python_ext.cc)
// creates nodes in its forward ops and runs their "backward" on an engine-like thread through
// the fake_torch_* functions below.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#define FAKE_TORCH_API __attribute__((visibility("default")))

namespace at {
namespace sequence_number {
FAKE_TORCH_API uint64_t peek();
FAKE_TORCH_API uint64_t get_and_increment();
}  // namespace sequence_number

struct RecordFunction {
  FAKE_TORCH_API static uint64_t currentThreadId();
};
}  // namespace at

namespace torch::autograd {

struct Node : std::enable_shared_from_this<Node> {
  explicit Node(uint64_t sequence_nr)
      : sequence_nr_(sequence_nr), thread_id_(at::RecordFunction::currentThreadId()) {}
  virtual ~Node() = default;

  const uint64_t sequence_nr_;
  uint64_t topological_nr_ = 0;
  bool has_parent_ = false;
  uint64_t thread_id_ = 0;
};

FAKE_TORCH_API std::shared_ptr<Node> get_current_node();

}  // namespace torch::autograd

namespace {

thread_local uint64_t t_sequence_nr = 0;
thread_local uint64_t t_profiler_id = 0;
std::atomic<uint64_t> g_next_profiler_id{0};
thread_local std::shared_ptr<torch::autograd::Node> t_current_node;

std::mutex g_nodes_mutex;
std::vector<std::shared_ptr<torch::autograd::Node>> g_nodes;  // in creation order

}  // namespace

namespace at {
uint64_t sequence_number::peek() {
  return t_sequence_nr;
}
uint64_t sequence_number::get_and_increment() {
  return t_sequence_nr++;
}
uint64_t RecordFunction::currentThreadId() {
  if (t_profiler_id == 0) t_profiler_id = ++g_next_profiler_id;
  return t_profiler_id;
}
}  // namespace at

std::shared_ptr<torch::autograd::Node> torch::autograd::get_current_node() {
  return t_current_node;
}

extern "C" {

// A forward op's node: the calling thread's next sequence number. Returns the node's index.
FAKE_TORCH_API size_t fake_torch_new_node() {
  auto node = std::make_shared<torch::autograd::Node>(at::sequence_number::get_and_increment());
  std::lock_guard<std::mutex> lock(g_nodes_mutex);
  g_nodes.push_back(std::move(node));
  return g_nodes.size() - 1;
}

// The engine runs node `index`'s backward on the calling thread until fake_torch_leave_node.
FAKE_TORCH_API void fake_torch_enter_node(size_t index) {
  std::lock_guard<std::mutex> lock(g_nodes_mutex);
  t_current_node = index < g_nodes.size() ? g_nodes[index] : nullptr;
}

// A node the engine makes itself (AccumulateGrad): no forward op, sequence number UINT64_MAX.
FAKE_TORCH_API void fake_torch_enter_engine_node() {
  t_current_node = std::make_shared<torch::autograd::Node>(UINT64_MAX);
}

FAKE_TORCH_API void fake_torch_leave_node() {
  t_current_node.reset();
}

// How many references node `index` has (the test checks that gpuperf gave its back).
FAKE_TORCH_API long fake_torch_node_references(size_t index) {
  std::lock_guard<std::mutex> lock(g_nodes_mutex);
  return index < g_nodes.size() ? g_nodes[index].use_count() : -1;
}

}  // extern "C"
