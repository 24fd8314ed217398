// Which signals the injection library handles, and how (docs/recording.md, "How a run ends").
// Every signal whose default action ends the process gets the final flush when the program
// left it at that default; the rest stay as the program set them.
//
// Handled: SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGABRT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2,
// SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGIO, SIGPWR, SIGSTKFLT (sent, or raised by a
// limit or a broken pipe), and the faults SIGSEGV, SIGBUS, SIGFPE and SIGILL.
// Not handled:
//   - SIGKILL, SIGSTOP: they cannot be caught (the periodic flush bounds what SIGKILL loses);
//   - SIGTRAP, SIGSYS: debuggers and seccomp sandboxes work through them, and a handler would
//     change what they see;
//   - SIGRTMIN..SIGRTMAX: libraries pick a real-time signal that is still at SIG_DFL as their
//     own (timers, thread suspension); taking them all would leave none free;
//   - the signals whose default is to ignore, stop or continue: they end nothing.
#pragma once

#include <signal.h>

#include <span>

namespace gpuperf::inject {

struct HandledSignal {
  int number;
  // A fault (SIGSEGV, SIGBUS, SIGFPE, SIGILL) is raised by the instruction that caused it:
  // returning from the handler runs that instruction again, and with the default action back
  // in place it ends the process as it would have, core dump included.
  bool fault;
  // SIGINT, SIGTERM, SIGABRT: gpuperf also flushes (without closing the trace) before the
  // program's own handler, which often ends the program at once.
  bool flush_before_program;
};

std::span<const HandledSignal> HandledSignals();

enum class SignalRole {
  kLeave,                  // not ours: the program's disposition stays in place, untouched
  kFlushThenProgram,       // a flush, then the program's own handler (kept before ours)
  kFinalFlushThenDefault,  // the final flush, then the default action (the process ends)
};

// What gpuperf does with `handled` given the disposition the program had set. Ignored signals
// stay ignored (Python ignores SIGPIPE); a program's own handler stays the only one for every
// signal but SIGINT, SIGTERM and SIGABRT (runtimes such as the JVM use SIGSEGV and SIGQUIT on
// purpose, and a GC may use SIGPWR and SIGXCPU).
SignalRole RoleOf(const HandledSignal& handled, const struct sigaction& program_action);

}  // namespace gpuperf::inject
