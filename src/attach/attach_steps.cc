#include "attach/attach_steps.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace gpuperf::attach {
namespace {

pid_t g_target = 0;

const char* StepName(AttachStep step) {
  switch (step) {
    case AttachStep::kChecked:
      return "checked";
    case AttachStep::kLocked:
      return "locked";
    case AttachStep::kSeized:
      return "seized";
    case AttachStep::kStopped:
      return "stopped";
    case AttachStep::kWritten:
      return "written";
    case AttachStep::kRedirected:
      return "redirected";
    case AttachStep::kResumed:
      return "resumed";
    case AttachStep::kInCall:
      return "in_call";
    case AttachStep::kMarker:
      return "marker";
    case AttachStep::kReleased:
      return "released";
    case AttachStep::kStarted:
      return "started";
    case AttachStep::kStopAsked:
      return "stop_asked";
    case AttachStep::kDone:
      return "done";
  }
  return "?";
}

int StepFromEnvironment(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr ? std::atoi(text) : 0;
}

}  // namespace

void SetStepTarget(pid_t pid) {
  g_target = pid;
}

void ReachStep(AttachStep step) {
  const int n = static_cast<int>(step);
  if (std::getenv("GPUPERF_ATTACH_TRACE_STEPS") != nullptr) {
    std::fprintf(stderr, "gpuperf: attach step %d %s\n", n, StepName(step));
  }
  if (StepFromEnvironment("GPUPERF_ATTACH_TARGET_EXIT_AT") == n && g_target > 0) {
    kill(g_target, SIGKILL);
  }
  if (StepFromEnvironment("GPUPERF_ATTACH_STOP_AT") == n) raise(SIGKILL);
}

}  // namespace gpuperf::attach
