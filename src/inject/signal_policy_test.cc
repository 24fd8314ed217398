#include "inject/signal_policy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>

namespace gpuperf::inject {
namespace {

struct sigaction Disposition(void (*handler)(int)) {
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = handler;
  return action;
}

void ProgramHandler(int) {}
void ProgramSigaction(int, siginfo_t*, void*) {}

const HandledSignal& Find(int number) {
  for (const HandledSignal& handled : HandledSignals()) {
    if (handled.number == number) return handled;
  }
  static const HandledSignal kNone{0, false, false};
  ADD_FAILURE() << "signal " << number << " is not handled";
  return kNone;
}

TEST(SignalPolicyTest, EverySignalThatEndsAProgramButTheDebuggersAndRealTimeOnes) {
  std::set<int> handled;
  for (const HandledSignal& signal : HandledSignals()) handled.insert(signal.number);
  EXPECT_EQ(handled,
            (std::set<int>{SIGHUP,  SIGINT,    SIGQUIT,   SIGTERM, SIGABRT, SIGPIPE, SIGALRM,
                           SIGUSR1, SIGUSR2,   SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGIO,
                           SIGPWR,  SIGSTKFLT, SIGSEGV,   SIGBUS,  SIGFPE,  SIGILL}));
  for (int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) EXPECT_TRUE(Find(fault).fault) << fault;
  EXPECT_FALSE(Find(SIGTERM).fault);
}

TEST(SignalPolicyTest, TheDefaultActionGetsTheFinalFlush) {
  for (const HandledSignal& signal : HandledSignals()) {
    EXPECT_EQ(RoleOf(signal, Disposition(SIG_DFL)), SignalRole::kFinalFlushThenDefault)
        << signal.number;
  }
}

TEST(SignalPolicyTest, AnIgnoredSignalStaysIgnored) {
  for (const HandledSignal& signal : HandledSignals()) {
    EXPECT_EQ(RoleOf(signal, Disposition(SIG_IGN)), SignalRole::kLeave) << signal.number;
  }
}

TEST(SignalPolicyTest, OnlyInterruptTerminateAndAbortHandlersGetAFlushFirst) {
  for (const HandledSignal& signal : HandledSignals()) {
    const bool flush_first =
        signal.number == SIGINT || signal.number == SIGTERM || signal.number == SIGABRT;
    const SignalRole want = flush_first ? SignalRole::kFlushThenProgram : SignalRole::kLeave;
    EXPECT_EQ(RoleOf(signal, Disposition(ProgramHandler)), want) << signal.number;
    struct sigaction with_info = Disposition(nullptr);
    with_info.sa_sigaction = ProgramSigaction;
    with_info.sa_flags = SA_SIGINFO;
    EXPECT_EQ(RoleOf(signal, with_info), want) << signal.number;
  }
}

}  // namespace
}  // namespace gpuperf::inject
