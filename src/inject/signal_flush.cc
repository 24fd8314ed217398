#include "inject/signal_flush.h"

#include <pthread.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>

#include "inject/recorder.h"
#include "inject/signal_policy.h"

// Everything the handler calls is async-signal-safe: atomics, getpid, clock_gettime, nanosleep,
// sigaction, pthread_sigmask, raise and the writer's eventfd write. Flushing is not: the
// writer thread does it (it blocks every signal, so no handler ever waits on itself).
namespace gpuperf::inject {
namespace {

struct sigaction g_program_actions[NSIG];
std::atomic<SignalRole> g_roles[NSIG];
bool g_faults[NSIG];
// The first signal that is to end the process; whichever handler returns first ends it with
// this one's default action, so that the cause of death does not depend on which thread a
// later signal happened to land on.
std::atomic<int> g_ending_signal{0};
// A flush before a program's own handler, one at a time.
std::atomic<bool> g_flush_before_program{false};

// The recorder of this process (a child forked without exec has a copy that records nothing).
Recorder* OwnRecorder() {
  Recorder* recorder = GetRecorder();
  return recorder != nullptr && static_cast<uint32_t>(getpid()) == recorder->pid ? recorder
                                                                                 : nullptr;
}

uint64_t FlushWaitNs(const Recorder& recorder) {
  // A flight recorder's exit dump writes its whole window: give it longer.
  return (recorder.writer.flight() ? 20000ull : 3000ull) * 1000000ull;
}

void SleepOneMs() {
  timespec ms{0, 1000000};
  nanosleep(&ms, nullptr);
}

// Waits, a bounded time, until the writer has closed the trace: the final flush a signal or
// exit() started, perhaps on another thread.
void AwaitFinalFlush(const Recorder& recorder) {
  const uint64_t deadline = MonotonicNs() + FlushWaitNs(recorder);
  while (recorder.writer.running() && MonotonicNs() < deadline) SleepOneMs();
}

// The final flush before the process ends. The first to come (a signal on any thread, or
// exit) starts it; every other terminating signal waits for it rather than ending the
// process halfway (a process group's SIGTERM and `record`'s forwarded copy land on two threads).
void FinalFlush() {
  Recorder* recorder = OwnRecorder();
  if (recorder == nullptr) return;
  if (!recorder->finished.exchange(true) && !recorder->disabled.load() &&
      recorder->writer.running()) {
    recorder->writer.RequestSignalFlush(true);
  }
  AwaitFinalFlush(*recorder);
  recorder->disabled.store(true);
}

// SIGINT, SIGTERM, SIGABRT with the program's own handler: a flush first (the trace stays
// open: the program may go on), since the handler often ends the program at once.
void FlushBeforeProgram() {
  Recorder* recorder = OwnRecorder();
  if (recorder == nullptr) return;
  if (recorder->finished.load()) {
    // A final flush is under way (another signal, or exit): the handler may end the process.
    AwaitFinalFlush(*recorder);
    return;
  }
  bool idle = false;
  if (recorder->disabled.load() || !recorder->writer.running() ||
      !g_flush_before_program.compare_exchange_strong(idle, true)) {
    return;
  }
  recorder->writer.RequestSignalFlush(false);
  const uint64_t deadline = MonotonicNs() + FlushWaitNs(*recorder);
  while (!recorder->writer.SignalFlushDone() && recorder->writer.running() &&
         MonotonicNs() < deadline) {
    SleepOneMs();
  }
  g_flush_before_program.store(false);
}

// The program's handler, called as the kernel would have called it: its own mask added to
// the interrupted code's, and the signal itself blocked unless it asked for SA_NODEFER.
void CallProgramHandler(int sig, siginfo_t* info, void* context) {
  const struct sigaction& program = g_program_actions[sig];
  if (program.sa_flags & SA_RESETHAND) {
    g_roles[sig].store(SignalRole::kFinalFlushThenDefault);  // as if reset to SIG_DFL
  }
  if (context != nullptr) {
    sigset_t mask = static_cast<ucontext_t*>(context)->uc_sigmask;
    sigorset(&mask, &mask, &program.sa_mask);
    if (!(program.sa_flags & SA_NODEFER)) sigaddset(&mask, sig);
    pthread_sigmask(SIG_SETMASK, &mask, nullptr);
  }
  if (program.sa_flags & SA_SIGINFO) {
    program.sa_sigaction(sig, info, context);
  } else {
    program.sa_handler(sig);
  }
}

// The one action that ends the process: the default action of the first terminating signal.
// Blocked while this handler runs (its own signal, or in our mask), it is delivered as the
// handler returns. A fault the kernel raised is not raised again: returning runs the faulting
// instruction again, which faults again under the default action (the same core dump, the
// same siginfo); with the default in place it cannot loop.
void EndWithDefaultAction(int sig, const siginfo_t* info) {
  const int ending = g_ending_signal.load();
  struct sigaction default_action;
  std::memset(&default_action, 0, sizeof(default_action));
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  sigaction(ending, &default_action, nullptr);
  const bool refaults = ending == sig && g_faults[sig] && info != nullptr && info->si_code > 0;
  if (!refaults) raise(ending);
}

void OnSignal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (g_roles[sig].load() == SignalRole::kFinalFlushThenDefault) {
    int earlier = 0;
    g_ending_signal.compare_exchange_strong(earlier, sig);
    FinalFlush();
    EndWithDefaultAction(sig, info);
    errno = saved_errno;
    return;
  }
  FlushBeforeProgram();
  errno = saved_errno;
  CallProgramHandler(sig, info, context);
}

}  // namespace

void InstallSignalFlush() {
  // While one handler waits for the final flush, the other terminating signals stay away from
  // its thread: they land on another one (and wait there too) or wait until it returns.
  sigset_t ours;
  sigemptyset(&ours);
  for (const HandledSignal& handled : HandledSignals()) sigaddset(&ours, handled.number);
  for (const HandledSignal& handled : HandledSignals()) {
    const int sig = handled.number;
    struct sigaction program;
    if (sigaction(sig, nullptr, &program) != 0) continue;
    const SignalRole role = RoleOf(handled, program);
    if (role == SignalRole::kLeave) continue;
    g_program_actions[sig] = program;
    g_roles[sig].store(role);
    g_faults[sig] = handled.fault;
    struct sigaction action;
    std::memset(&action, 0, sizeof(action));
    action.sa_sigaction = OnSignal;
    action.sa_mask = ours;
    // The program's handler keeps its own way with interrupted calls and stacks. Ours runs on
    // the thread's alternate stack where it has one: a stack overflow's SIGSEGV needs it.
    action.sa_flags = SA_SIGINFO | (role == SignalRole::kFlushThenProgram
                                        ? program.sa_flags & (SA_RESTART | SA_ONSTACK)
                                        : SA_RESTART | SA_ONSTACK);
    sigaction(sig, &action, nullptr);
  }
}

}  // namespace gpuperf::inject
