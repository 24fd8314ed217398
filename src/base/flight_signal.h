// Which signals may ask the flight recorder for a dump (`record --flight-signal`): not those
// that end the run (gpuperf's own handler flushes at SIGINT, SIGTERM and SIGABRT), cannot be
// caught, report a fault, or mean something to every program (SIGCHLD, SIGCONT, SIGPIPE).
// Both halves check it: `record` refuses such a signal, the injection library ignores it.
#pragma once

#include <signal.h>

namespace gpuperf {

inline bool IsRefusedFlightSignal(int number) {
  switch (number) {
    case SIGINT:
    case SIGTERM:
    case SIGABRT:
    case SIGKILL:
    case SIGSTOP:
    case SIGSEGV:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
    case SIGCHLD:
    case SIGCONT:
    case SIGPIPE:
      return true;
    default:
      return number < 1 || number > SIGRTMAX;
  }
}

}  // namespace gpuperf
