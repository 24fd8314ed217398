#include "inject/signal_policy.h"

namespace gpuperf::inject {

namespace {

constexpr HandledSignal kHandled[] = {
    {SIGHUP, false, false},    {SIGINT, false, true},   {SIGQUIT, false, false},
    {SIGTERM, false, true},    {SIGABRT, false, true},  {SIGPIPE, false, false},
    {SIGALRM, false, false},   {SIGUSR1, false, false}, {SIGUSR2, false, false},
    {SIGVTALRM, false, false}, {SIGPROF, false, false}, {SIGXCPU, false, false},
    {SIGXFSZ, false, false},   {SIGIO, false, false},   {SIGPWR, false, false},
    {SIGSTKFLT, false, false}, {SIGSEGV, true, false},  {SIGBUS, true, false},
    {SIGFPE, true, false},     {SIGILL, true, false},
};

}  // namespace

std::span<const HandledSignal> HandledSignals() {
  return kHandled;
}

SignalRole RoleOf(const HandledSignal& handled, const struct sigaction& program_action) {
  // sa_handler and sa_sigaction share their storage: SIG_DFL (0) and SIG_IGN (1) read the
  // same through either, whatever SA_SIGINFO says (the kernel reads them so too).
  if (program_action.sa_handler == SIG_DFL) return SignalRole::kFinalFlushThenDefault;
  if (program_action.sa_handler == SIG_IGN) return SignalRole::kLeave;
  return handled.flush_before_program ? SignalRole::kFlushThenProgram : SignalRole::kLeave;
}

}  // namespace gpuperf::inject
