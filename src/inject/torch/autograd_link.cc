#include "inject/torch/autograd_link.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "inject/log.h"
#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

// PyTorch's entry points (libtorch_cpu.so, namespaces at and torch::autograd):
//   uint64_t at::sequence_number::peek()             the thread's next node number
//   uint64_t at::RecordFunction::currentThreadId()   the thread's profiler id (from 1)
//   std::shared_ptr<Node> torch::autograd::get_current_node()
// The last returns a class object, which the C++ ABI returns through memory the caller
// provides: a std::shared_ptr of our own (libstdc++'s layout is its ABI) receives it, and
// its destructor gives the reference back.
using PeekFn = uint64_t (*)();
using ThreadIdFn = uint64_t (*)();
using CurrentNodeFn = std::shared_ptr<const unsigned char> (*)();

constexpr const char* kPeekSymbol = "_ZN2at15sequence_number4peekEv";
constexpr const char* kThreadIdSymbol = "_ZN2at14RecordFunction15currentThreadIdEv";
constexpr const char* kCurrentNodeSymbol = "_ZN5torch8autograd16get_current_nodeEv";

// torch::autograd::Node (torch/csrc/autograd/function.h, PyTorch 2.x): vtable pointer,
// enable_shared_from_this's weak_ptr, then sequence_nr_, topological_nr_, has_parent_,
// thread_id_. Checked on PyTorch 2.11 (docs/recording.md).
constexpr size_t kNodeSequenceOffset = 24;
constexpr size_t kNodeThreadOffset = 48;
// AccumulateGrad and other engine-made nodes carry UINT64_MAX: no forward op.
constexpr uint64_t kMaxSequence = (uint64_t{1} << 48) - 1;
// Profiler thread ids are numbered from 1 as threads first record; one the table keys
// cannot hold is not linked.
constexpr uint64_t kMaxThread = 255;
// After this many nodes whose fields make no sense, and none that did, the layout is not
// the one we know: stop looking (one notice).
constexpr uint64_t kMaxUnreadableNodes = 64;

std::atomic<PeekFn> g_peek{nullptr};
std::atomic<ThreadIdFn> g_thread_id{nullptr};
std::atomic<CurrentNodeFn> g_current_node{nullptr};
std::atomic<bool> g_ready{false};
std::atomic<bool> g_off{false};        // GPUPERF_AUTOGRAD_LINK=off, or the layout refused
std::atomic<bool> g_node_read{false};  // a node's fields made sense at least once
std::atomic<bool> g_bench_paused{false};

// Forward stacks by node: one 64-bit word per entry, so that a reader on another thread
// never sees half of one: [thread:8][sequence:32][stack id:24]. An entry is found by its
// thread and sequence number; a later node that maps to the same entry replaces it.
constexpr int kForwardTableBits = 16;
constexpr uint64_t kMaxStackInTable = (uint64_t{1} << 24) - 1;
std::atomic<uint64_t> g_forward[1u << kForwardTableBits];

struct ThreadState {
  uint64_t last_sequence = 0;  // peek() at the thread's last launch
  uint64_t profiler_id = 0;    // currentThreadId(), once asked
};
thread_local ThreadState t_state;

uint64_t Thread(uint64_t node) {
  return node >> 48;
}
uint64_t Sequence(uint64_t node) {
  return node & kMaxSequence;
}

std::atomic<uint64_t>& EntryOf(uint64_t node) {
  const uint64_t slot = (Sequence(node) + Thread(node) * 0x9e37) & ((1u << kForwardTableBits) - 1);
  return g_forward[slot];
}

uint64_t TableTag(uint64_t node) {
  return (Thread(node) << 32 | (Sequence(node) & 0xffffffff)) << 24;
}

uint64_t ReadWord(const unsigned char* object, size_t offset) {
  uint64_t word;
  std::memcpy(&word, object + offset, sizeof(word));
  return word;
}

void OffForUnknownLayout() {
  if (g_off.exchange(true, std::memory_order_relaxed)) return;
  LogOnce(
      "PyTorch's autograd nodes are not laid out as expected: backward kernels keep their "
      "own stacks, without their forward op's Python frames");
}

}  // namespace

bool ProbeAutogradLink() {
  if (g_ready.load(std::memory_order_acquire)) return true;
  if (g_off.load(std::memory_order_relaxed)) return false;
  if (const char* setting = std::getenv("GPUPERF_AUTOGRAD_LINK");
      setting != nullptr && std::strcmp(setting, "off") == 0) {
    g_off.store(true, std::memory_order_relaxed);
    return false;
  }
  void* torch = dlopen("libtorch_cpu.so", RTLD_NOLOAD | RTLD_LAZY);
  if (torch == nullptr) return false;
  auto peek = reinterpret_cast<PeekFn>(dlsym(torch, kPeekSymbol));
  auto thread_id = reinterpret_cast<ThreadIdFn>(dlsym(torch, kThreadIdSymbol));
  auto current_node = reinterpret_cast<CurrentNodeFn>(dlsym(torch, kCurrentNodeSymbol));
  dlclose(torch);  // RTLD_NOLOAD took a reference; the process keeps its own
  if (peek == nullptr || thread_id == nullptr || current_node == nullptr) return false;
  g_peek.store(peek, std::memory_order_relaxed);
  g_thread_id.store(thread_id, std::memory_order_relaxed);
  g_current_node.store(current_node, std::memory_order_relaxed);
  g_ready.store(true, std::memory_order_release);
  LogVerbose("PyTorch found: backward kernels take their forward op's Python frames");
  return true;
}

bool AutogradLinkReady() {
  return g_ready.load(std::memory_order_acquire) && !g_off.load(std::memory_order_relaxed);
}

void PauseAutogradLinkForBench(bool paused) {
  g_bench_paused.store(paused, std::memory_order_relaxed);
}

AutogradLaunch CurrentAutogradLaunch() {
  AutogradLaunch launch;
  if (!AutogradLinkReady() || g_bench_paused.load(std::memory_order_relaxed)) return launch;
  const std::shared_ptr<const unsigned char> node =
      g_current_node.load(std::memory_order_relaxed)();
  if (node != nullptr) {
    const uint64_t sequence = ReadWord(node.get(), kNodeSequenceOffset);
    const uint64_t thread = ReadWord(node.get(), kNodeThreadOffset);
    if (sequence == UINT64_MAX) return launch;  // an engine-made node (AccumulateGrad)
    if (sequence > kMaxSequence || thread == 0 || thread > kMaxThread) {
      CountStat(StatId::autograd_nodes_unreadable);
      if (!g_node_read.load(std::memory_order_relaxed) &&
          GetStat(StatId::autograd_nodes_unreadable) >= kMaxUnreadableNodes) {
        OffForUnknownLayout();
      }
      return launch;
    }
    if (!g_node_read.load(std::memory_order_relaxed)) {
      g_node_read.store(true, std::memory_order_relaxed);
    }
    launch.role = AutogradLaunch::Role::kBackward;
    launch.node = AutogradNodeKey(thread, sequence);
    return launch;
  }
  ThreadState& state = t_state;
  const uint64_t next = g_peek.load(std::memory_order_relaxed)();
  if (next == state.last_sequence) return launch;
  state.last_sequence = next;
  if (next == 0 || next - 1 > kMaxSequence) return launch;
  if (state.profiler_id == 0) state.profiler_id = g_thread_id.load(std::memory_order_relaxed)();
  if (state.profiler_id == 0 || state.profiler_id > kMaxThread) return launch;
  launch.role = AutogradLaunch::Role::kForward;
  launch.node = AutogradNodeKey(state.profiler_id, next - 1);
  return launch;
}

void NoteForwardStack(uint64_t node, StackId stack) {
  if (stack == 0 || stack > kMaxStackInTable) return;
  EntryOf(node).store(TableTag(node) | stack, std::memory_order_relaxed);
}

StackId ForwardStackOf(uint64_t node) {
  const uint64_t entry = EntryOf(node).load(std::memory_order_relaxed);
  if ((entry & ~kMaxStackInTable) != TableTag(node)) return 0;
  return static_cast<StackId>(entry & kMaxStackInTable);
}

}  // namespace gpuperf::inject
