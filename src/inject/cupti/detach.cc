#include "inject/cupti/detach.h"

#include <cupti.h>

#include <atomic>

#include "inject/cupti/activity.h"
#include "inject/cupti/callbacks.h"
#include "inject/cupti/cupti_call.h"
#include "inject/recorder.h"

namespace gpuperf::inject {
namespace {

std::atomic<bool> g_detached{false};

}  // namespace

void DetachCupti(Recorder& recorder) {
  if (g_detached.load()) return;
  EnableActivities(recorder, false, /*kernels=*/true);
  SetApiCallbacks(false);
  recorder.writer.StopCuptiFlushes(2000);
  FlushActivities(true);
  UnsubscribeCallbacks();
  GP_CUPTI_CALL(cuptiFinalize());
  g_detached.store(true);
}

void MarkCuptiAttached() {
  g_detached.store(false);
}

bool CuptiDetached() {
  return g_detached.load();
}

}  // namespace gpuperf::inject
