// The injection library's signal handlers (signal_policy.h says which signals, and why): the
// trace gets its final flush before any signal ends the process, on whichever thread the
// signal lands and however many arrive while that flush runs.
#pragma once

namespace gpuperf::inject {

// Once the recorder runs. Signals the program ignores, or handles itself (but SIGINT, SIGTERM
// and SIGABRT, whose handlers run after a flush), are left as they are.
void InstallSignalFlush();

}  // namespace gpuperf::inject
