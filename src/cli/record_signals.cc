#include "cli/record_signals.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace gpuperf::cli {
namespace {

std::atomic<pid_t> g_child{-1};
std::atomic<bool> g_child_shares_group{true};

void ForwardSignal(int sig, siginfo_t* info, void*) {
  const pid_t child = g_child.load();
  if (child <= 0) return;
  // Sharing our group, the child got the terminal's own signal itself (Ctrl+C, Ctrl+\, a
  // hangup: the kernel sends those to the foreground group).
  if (g_child_shares_group.load() && info != nullptr && info->si_code == SI_KERNEL) return;
  const int saved_errno = errno;
  kill(child, sig);
  errno = saved_errno;
}

}  // namespace

ChildGroup ChooseChildGroup(pid_t terminal_foreground, pid_t own_group, pid_t own_pid) {
  if (terminal_foreground > 0 && (terminal_foreground == own_group || own_group == own_pid)) {
    return ChildGroup::kShared;
  }
  return ChildGroup::kOwn;
}

ChildGroup ChildGroupForThisRun() {
  pid_t foreground = -1;
  const int tty = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
  if (tty >= 0) {
    foreground = tcgetpgrp(tty);
    close(tty);
  }
  return ChooseChildGroup(foreground, getpgrp(), getpid());
}

void EnterChildGroup(ChildGroup group, pid_t record_pid) {
  if (group != ChildGroup::kOwn) return;
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != record_pid) raise(SIGTERM);  // record died before the line above
}

void ForwardSignals(pid_t child, ChildGroup group, int flight_signal) {
  if (group == ChildGroup::kOwn) setpgid(child, child);  // whichever of the two comes first
  g_child_shares_group.store(group == ChildGroup::kShared);
  g_child.store(child);
  struct sigaction forward;
  std::memset(&forward, 0, sizeof(forward));
  forward.sa_sigaction = ForwardSignal;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  // What would end `record` but is meant for the program. Not SIGPIPE, SIGXCPU, SIGXFSZ,
  // SIGVTALRM or SIGPROF: those come from record's own writes, limits and timers.
  for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM}) {
    sigaction(sig, &forward, nullptr);
  }
  // A program of its own group is not continued with ours (timeout sends SIGCONT after its
  // signal, in case the program was stopped).
  if (group == ChildGroup::kOwn) sigaction(SIGCONT, &forward, nullptr);
  // The flight signal sent to gpuperf reaches the command too: it asks for a dump.
  if (flight_signal > 0) sigaction(flight_signal, &forward, nullptr);
}

void StopForwarding() {
  g_child.store(-1);
}

}  // namespace gpuperf::cli
