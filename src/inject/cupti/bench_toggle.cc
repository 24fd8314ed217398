// The benchmark hook, gpuperf_bench_toggle: one process switches its recording between
// levels between batches of work, so that a benchmark can time each level in alternation,
// free of the differences between processes (bench/python/decode_overhead.py's in-process
// mode, launch_bound --ab; docs/performance.md). Not for production use: call it from one
// thread, between batches, with no CUDA call in flight.
//
// Levels:
//    1  the configured recording
//    2  the same without Python frames
//    3  the same without stacks (launches linked, API records kept)
//    4  the same with whole native stacks (GPUPERF_NATIVE_STACKS=full) where Python frames are
//       taken
//    5  the same with every stack unwound (GPUPERF_STACK_MEMO=off)
//    6  the same with CUPTI's SYNCHRONIZATION kind on as well (the recording before session
//       11 took host waits from it). Switching it off again leaves its cost in place: put a
//       detached level (-2) after it.
//    7  the configured kinds and callbacks, each callback returning at once: what CUPTI's
//       calling them costs, nothing recorded but the activity records
//    8  the recording without its driver-API callbacks (the runtime's launches keep their
//       stacks; the driver calls that runtime calls make, and the driver's own launches, go
//       unseen): what the driver callbacks cost
//    9  the recording without PyTorch's autograd link (torch/autograd_link.h): what linking
//       backward kernels to their forward ops costs
//    0  only what the CUPTI floor tracer does (kernel records)
//   -1  every activity kind and API callback off: CUPTI attached, idle (the context and
//       cudaDeviceReset callbacks stay on, as in every level above)
//   -4  as -1 with no callback enabled at all
//   -2  CUPTI detached (cuptiFinalize): the process as if not profiled; gpuperf's threads
//       stay, idle. Another CUPTI client (torch.profiler) can run meanwhile.
//   -3  as -2, and CUPTI finalized again if already detached, taking what another client left
//       subscribed with it (torch.profiler keeps its subscriber after a session, and CUPTI
//       has one subscriber slot)
//   -5  detached, then only a subscriber with no callback enabled (no activity API call)
//   -6  detached, then only the activity API's buffer callbacks (no kind, no subscriber)
// -100  as -6, with the configured activity kinds on (the recording's kinds, no callbacks)
// -100 - K  as -6, with the one activity kind K (a CUpti_ActivityKind) on
// -200 - B  the configured recording without activity group B (bit B of base/activities.h's
//       kAct* mask), attached afresh: a kind once enabled leaves its cost behind (level 6)
// Any level from 5 down to -1, and -4, attaches CUPTI again after the others.
// -4, -5, -6 and -100 - K tell where the cost of CUPTI without callbacks lies
// (docs/performance.md).
//
// Returns 0, or -1 (changing nothing) for a level not listed above or when there is no
// recording, or -1 when CUPTI could not be attached again (another client holds the
// subscriber: -3 first).
#include <cupti.h>

#include "inject/cupti/activity.h"
#include "inject/cupti/callbacks.h"
#include "inject/cupti/cupti_call.h"
#include "inject/cupti/detach.h"
#include "inject/recorder.h"
#include "inject/stack/stack_capture.h"
#include "inject/torch/autograd_link.h"

namespace gpuperf::inject {
namespace {

enum class Attachment { kAttached, kDetached, kPartial };
// Only the thread that toggles reads or writes these.
Attachment g_attachment = Attachment::kAttached;
bool g_sync_kind_on = false;  // level 6's

// Between batches, with no CUDA call in flight (the hook's contract): finalized at once.
void Detach(Recorder& r) {
  DetachCuptiNow(r);
  g_attachment = Attachment::kDetached;
  g_sync_kind_on = false;
}

// Once more while detached (-3): whatever another client left subscribed goes too.
void Finalize() {
  GP_CUPTI_CALL(cuptiFinalize());
  g_attachment = Attachment::kDetached;
  g_sync_kind_on = false;
}

// CUPTI attaches again at the first call; then what Initialize set up, as it did. False
// when the subscriber slot went to another client meanwhile.
bool Reattach(Recorder& r) {
  if (g_attachment == Attachment::kPartial) Detach(r);  // what it recorded delivered first
  MarkCuptiAttached();                                  // the calls below attach CUPTI again
  if (!RegisterActivityCallbacks(r)) return false;
  if (r.subscribed && !EnableCallbacks(r)) return false;
  SetActivityFlushPeriod(r.config.cupti_flush_period_ms);
  r.writer.ResumeCuptiFlushes();
  g_attachment = Attachment::kAttached;
  return true;
}

int DetachedLevel(Recorder& r, int level) {
  if (g_attachment != Attachment::kDetached) {
    Detach(r);
  } else if (level == -3) {
    Finalize();
  }
  if (level == -5) {
    MarkCuptiAttached();  // partly: the next Detach finalizes it again
    if (!SubscribeIdle(r)) return -1;
    g_attachment = Attachment::kPartial;
  } else if (level == -6 || level <= -100) {
    MarkCuptiAttached();
    if (!RegisterActivityCallbacks(r)) return -1;
    g_attachment = Attachment::kPartial;
    if (level == -100) {
      EnableActivities(r, true, /*kernels=*/true);
    } else if (level < -100 &&
               GP_CUPTI_CALL(cuptiActivityEnable(static_cast<CUpti_ActivityKind>(-100 - level))) !=
                   CUPTI_SUCCESS) {
      return -1;
    }
  }
  return 0;
}

// The stack capture's and callbacks' switches for a recording level (1 to 9): what it
// leaves out.
void SetStackSwitches(int level) {
  IdleCallbacksForBench(level == 7);
  if (level == 8) DisableDriverCallbacksForBench();  // SetApiCallbacks enables them again
  PauseStacksForBench(level == 3);
  PauseAutogradLinkForBench(level == 9);
  PausePythonFramesForBench(level == 2);
  PauseNativeCutForBench(level == 4);
  PauseStackMemoForBench(level == 5);
}

// Level -200 - B: a fresh attachment recording all but group B; the next level finalizes it.
int WithoutActivityGroup(Recorder& r, int group) {
  if (g_attachment != Attachment::kDetached) Detach(r);
  const uint32_t configured = r.config.activities;
  r.config.activities &= ~(1u << group);
  const bool attached = Reattach(r);
  if (attached) {
    EnableActivities(r, true, /*kernels=*/true);
    SetApiCallbacks(true);
  }
  r.config.activities = configured;
  g_attachment = Attachment::kPartial;
  SetStackSwitches(1);  // the configured recording's stacks
  return attached ? 0 : -1;
}

bool KnownLevel(int level) {
  return (level >= -6 && level <= 9) || (level <= -100 && level > -100 - 64) ||
         (level <= -200 && level > -200 - 32);
}

}  // namespace
}  // namespace gpuperf::inject

extern "C" __attribute__((visibility("default"))) int gpuperf_bench_toggle(int level) {
  using namespace gpuperf::inject;
  Recorder* recorder = GetRecorder();
  if (recorder == nullptr || !recorder->capturing.load() || !KnownLevel(level)) return -1;
  if (level <= -200) return WithoutActivityGroup(*recorder, -200 - level);
  if (level <= -2 && level != -4) return DetachedLevel(*recorder, level);
  if (g_attachment != Attachment::kAttached && !Reattach(*recorder)) return -1;
  EnableActivities(*recorder, level > 0, /*kernels=*/level != 0);
  SetApiCallbacks(level > 0);
  if (level == -4) {
    DisableAllCallbacksForBench();
  } else {
    EnableResourceCallbacks();
  }
  SetStackSwitches(level);
  if ((level == 6) != g_sync_kind_on) {
    g_sync_kind_on = level == 6;
    GP_CUPTI_CALL(g_sync_kind_on ? cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)
                                 : cuptiActivityDisable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION));
  }
  return 0;
}
