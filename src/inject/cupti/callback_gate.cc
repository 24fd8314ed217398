#include "inject/cupti/callback_gate.h"

#include <atomic>
#include <chrono>
#include <thread>

namespace gpuperf::inject {
namespace {

constexpr uint32_t kStripes = 64;
struct alignas(64) Stripe {
  std::atomic<int64_t> running{0};
};
Stripe g_stripes[kStripes];
std::atomic<bool> g_closed{false};
std::atomic<uint32_t> g_next_stripe{0};
thread_local uint32_t t_stripe = kStripes;  // kStripes: none chosen yet
thread_local uint32_t t_depth = 0;          // callbacks of ours running on this thread

uint32_t ThisThreadStripe() {
  if (t_stripe == kStripes) {
    t_stripe = g_next_stripe.fetch_add(1, std::memory_order_relaxed) % kStripes;
  }
  return t_stripe;
}

int64_t RunningNow() {
  int64_t total = 0;
  for (const Stripe& stripe : g_stripes) total += stripe.running.load(std::memory_order_seq_cst);
  return total;
}

}  // namespace

// Counted first, then the gate read (both sequentially consistent): CloseCallbackGate, which
// closes first and counts after, either sees this callback counted or this callback sees the
// gate closed.
EnteredCallback::EnteredCallback() : stripe_(ThisThreadStripe()) {
  g_stripes[stripe_].running.fetch_add(1, std::memory_order_seq_cst);
  ++t_depth;
  open_ = !g_closed.load(std::memory_order_seq_cst);
}

EnteredCallback::~EnteredCallback() {
  --t_depth;
  g_stripes[stripe_].running.fetch_sub(1, std::memory_order_release);
}

bool CloseCallbackGate(uint64_t timeout_ms) {
  g_closed.store(true, std::memory_order_seq_cst);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (RunningNow() <= static_cast<int64_t>(t_depth)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void OpenCallbackGate() {
  g_closed.store(false, std::memory_order_seq_cst);
}

}  // namespace gpuperf::inject
