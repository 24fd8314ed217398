#include "inject/cupti/detach.h"

#include <cupti.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "inject/cupti/activity.h"
#include "inject/cupti/callback_gate.h"
#include "inject/cupti/callbacks.h"
#include "inject/cupti/cupti_call.h"
#include "inject/log.h"
#include "inject/recorder.h"

namespace gpuperf::inject {
namespace {

std::atomic<bool> g_detached{false};

// Where the finalize asked of the next API exit stands.
enum FinalizeState : int {
  kIdle,     // none asked for
  kAsked,    // the next runtime or driver API exit claims it
  kClaimed,  // a callback is finalizing now
  kDone,     // finalized
  kGaveUp,   // a callback of ours did not end in time: unsubscribed only
};
std::atomic<int> g_finalize{kIdle};
std::atomic<bool> g_stop_waiting{false};

// How long the finalizing callback waits for our other callbacks to end (a launch's takes
// microseconds; a synchronization's exit callback asks CUPTI one thing). The program's thread
// that made the call waits with it, so this is kept short: past it CUPTI is only unsubscribed.
constexpr uint64_t kCallbacksEndMs = 1000;

// Every kind and callback off, the writer's periodic flushes stopped, then one forced flush:
// every record CUPTI holds is ours before anything is torn down.
void StopRecordingInCupti(Recorder& recorder) {
  EnableActivities(recorder, false, /*kernels=*/true);
  QuietApiCallbacks();  // switched off by id, they would make the finalize crash (callbacks.h)
  recorder.writer.StopCuptiFlushes(2000);
  FlushActivities(true);
}

bool WaitWhile(int state, uint64_t wait_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (g_finalize.load() == state && !g_stop_waiting.load()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return g_finalize.load() != state;
}

}  // namespace

FinalizeOutcome DetachCupti(Recorder& recorder, uint64_t wait_ms) {
  if (g_detached.load()) return FinalizeOutcome::kNotOurs;
  StopRecordingInCupti(recorder);
  g_detached.store(true);
  // Without a subscriber of ours (none was needed) one is made for the finalize; where
  // another client holds the slot, CUPTI is theirs and stays as it is.
  if (!CallbacksSubscribed() && !SubscribeIdle(recorder)) return FinalizeOutcome::kNotOurs;
  // Every API exit comes to our callback before one may claim the finalize: once claimed,
  // no call of ours may reach CUPTI (on the H200 enabling the driver's domain after the
  // runtime's was refused with NOT_INITIALIZED: a runtime exit had finalized in between).
  SetApiDomainsForFinalize();
  g_finalize.store(kAsked);
  WaitWhile(kAsked, wait_ms);
  WaitWhile(kClaimed, kCallbacksEndMs + 1000);  // claimed: it ends within its own bound
  switch (g_finalize.load()) {
    case kDone:
      return FinalizeOutcome::kFinalized;
    case kGaveUp:
      return FinalizeOutcome::kLeft;
    default:
      return FinalizeOutcome::kPending;
  }
}

void DetachCuptiNow(Recorder& recorder) {
  if (g_detached.load()) return;
  StopRecordingInCupti(recorder);
  UnsubscribeCallbacks();
  if (CloseCallbackGate(kCallbacksEndMs)) {
    GP_CUPTI_CALL(cuptiFinalize());
  } else {
    LogOnce(
        "a CUDA call was still inside gpuperf's callback at the detach: CUPTI left "
        "unsubscribed but not finalized");
  }
  g_detached.store(true);
}

bool FinalizeRequested() {
  return g_finalize.load(std::memory_order_relaxed) == kAsked;
}

void FinalizeAtApiExit(int domain, const void* callback_data, bool flush_running) {
  if (flush_running) return;
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* data = static_cast<const CUpti_CallbackData*>(callback_data);
  if (data == nullptr || data->callbackSite != CUPTI_API_EXIT) return;
  int asked = kAsked;
  if (!g_finalize.compare_exchange_strong(asked, kClaimed)) return;  // another thread's
  // Our other callbacks end first: CUPTI tears down what they may still be using.
  if (!CloseCallbackGate(kCallbacksEndMs)) {
    UnsubscribeCallbacks();
    g_finalize.store(kGaveUp);
    return;
  }
  if (GP_CUPTI_CALL(cuptiFinalize()) != CUPTI_SUCCESS) {
    // Refused: our subscriber is still CUPTI's; given up, so the next window can subscribe.
    UnsubscribeCallbacks();
    g_finalize.store(kGaveUp);
    return;
  }
  ForgetSubscriber();  // finalizing took it
  g_finalize.store(kDone);
}

bool SettlePendingFinalize(uint64_t wait_ms) {
  int asked = kAsked;
  if (g_finalize.compare_exchange_strong(asked, kIdle)) {
    // The program made no CUDA call since the last window: CUPTI is as that window left it,
    // only our subscriber goes before the next one subscribes.
    UnsubscribeCallbacks();
    return true;
  }
  if (!WaitWhile(kClaimed, wait_ms)) return false;
  g_finalize.store(kIdle);
  return true;
}

void StopWaitingForFinalize() {
  g_stop_waiting.store(true);
}

void MarkCuptiAttached() {
  g_detached.store(false);
}

bool CuptiDetached() {
  return g_detached.load();
}

const char* FinalizeOutcomeName(FinalizeOutcome outcome) {
  switch (outcome) {
    case FinalizeOutcome::kFinalized:
      return "finalized";
    case FinalizeOutcome::kPending:
      return "pending";
    case FinalizeOutcome::kLeft:
      return "unsubscribed";
    case FinalizeOutcome::kNotOurs:
      break;
  }
  return "not_ours";
}

}  // namespace gpuperf::inject
