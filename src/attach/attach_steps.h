// The steps of `gpuperf attach`, numbered, so that the tests can end gpuperf (or the target)
// at each one and check that the target came to no harm (tests/e2e/attach_faults_test.sh):
//
//   GPUPERF_ATTACH_STOP_AT=N         gpuperf kills itself with SIGKILL on reaching step N
//   GPUPERF_ATTACH_TARGET_EXIT_AT=N  gpuperf kills the target on reaching step N, then goes on
//   GPUPERF_ATTACH_TRACE_STEPS=1     one "gpuperf: attach step N name" line per step reached
#pragma once

#include <sys/types.h>

namespace gpuperf::attach {

enum class AttachStep : int {
  kChecked = 1,  // the checks passed; nothing touched yet
  kLocked,       // the process's attach lock taken (no other gpuperf attach injects now)
  kSeized,       // a thread seized (ptrace), still running
  kStopped,      // that thread stopped, its place checked, about to be used
  kWritten,      // the stub written into the process (unused padding of a library's code)
  kRedirected,   // the thread's registers point at the stub
  kResumed,      // the thread runs the stub
  kInCall,       // the thread runs the stub (stopped at its first system call)
  kMarker,       // the stub reported; the thread still borrowed
  kReleased,     // the thread let go; it finishes the stub by itself
  kStarted,      // the window's thread records
  kStopAsked,    // gpuperf asked the window to end (Ctrl-C)
  kDone,         // the window ended and its trace is closed
};

// The process the TARGET_EXIT fault ends.
void SetStepTarget(pid_t pid);
void ReachStep(AttachStep step);

}  // namespace gpuperf::attach
