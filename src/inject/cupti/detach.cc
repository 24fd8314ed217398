#include "inject/cupti/detach.h"

#include <cupti.h>

#include <atomic>

#include "inject/cupti/activity.h"
#include "inject/cupti/callback_gate.h"
#include "inject/cupti/callbacks.h"
#include "inject/cupti/cupti_call.h"
#include "inject/log.h"
#include "inject/recorder.h"

namespace gpuperf::inject {
namespace {

std::atomic<bool> g_detached{false};
// How long the detach waits for callbacks still running (a launch's takes microseconds; a
// synchronization's exit callback asks CUPTI one thing).
constexpr uint64_t kCallbacksEndMs = 5000;

}  // namespace

void DetachCupti(Recorder& recorder) {
  if (g_detached.load()) return;
  EnableActivities(recorder, false, /*kernels=*/true);
  SetApiCallbacks(false);
  recorder.writer.StopCuptiFlushes(2000);
  FlushActivities(true);
  UnsubscribeCallbacks();
  // Finalized only once no callback of ours runs any more (callback_gate.h). One that has not
  // ended in the bound (an app thread stopped in a debugger inside it) keeps CUPTI as it is:
  // unsubscribed, every kind off, only not torn down.
  if (CloseCallbackGate(kCallbacksEndMs)) {
    GP_CUPTI_CALL(cuptiFinalize());
  } else {
    LogOnce(
        "a CUDA call was still inside gpuperf's callback at the detach: CUPTI left "
        "unsubscribed but not finalized");
  }
  g_detached.store(true);
}

void MarkCuptiAttached() {
  g_detached.store(false);
}

bool CuptiDetached() {
  return g_detached.load();
}

}  // namespace gpuperf::inject
