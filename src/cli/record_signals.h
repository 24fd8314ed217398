// How `record` passes signals on to the program it runs (docs/recording.md, "Signals").
//
// A signal sent to a whole process group (`timeout`, `kill -- -PGID`, a script's or a
// scheduler's stop) must reach the program once. On a terminal, as its foreground job (or a
// shell's job of its own, which `fg` can make so), `record` and the program share a process
// group as before: the terminal's Ctrl+C, Ctrl+\ and hangup reach both, and `record` passes on
// only what was sent to it alone. Anywhere else the program gets a process group of its own,
// which a group signal meant for `record`'s group does not reach: `record` passes it on, once.
#pragma once

#include <sys/types.h>

namespace gpuperf::cli {

enum class ChildGroup { kShared, kOwn };

// `terminal_foreground`: the foreground group of record's controlling terminal, or -1
// without one.
ChildGroup ChooseChildGroup(pid_t terminal_foreground, pid_t own_group, pid_t own_pid);

// ChooseChildGroup for this process and its controlling terminal.
ChildGroup ChildGroupForThisRun();

// In the child, between fork and exec. With kOwn: a group of its own, and SIGTERM if `record`
// dies first (a SIGKILLed `record` would otherwise leave it running unnoticed, outside any
// group a later kill names): the program flushes its trace and ends.
void EnterChildGroup(ChildGroup group, pid_t record_pid);

// In `record` after fork: from now until StopForwarding, the signals that would end `record`
// go to `child` instead (and SIGCONT too, with kOwn); `flight_signal` (0: none) as well.
void ForwardSignals(pid_t child, ChildGroup group, int flight_signal);
void StopForwarding();

}  // namespace gpuperf::cli
