// One writer per trace file (docs/trace-format.md, "One writer at a time").
//
// Whoever writes a trace file holds an open-file-description write lock (fcntl
// F_OFD_SETLK) on the whole of it: the recorder from TraceWriter::Create to Close, an
// appender (AppendToTrace: symbolize, record's own symbolize step) from before it reads the
// file until it closes it, `record --force` while it removes files. Nobody waits for it:
// whoever finds it taken leaves the file alone and says so in one line. The kernel drops
// the lock with the last descriptor of that open file, so a writer that dies (SIGKILL
// included) leaves none behind, and a forked child lets go of its copies at once
// (CloseTraceFilesInForkedChild). Readers take no lock: they ask whether one is held, and
// a file that is locked is "still being recorded", not "ended before its final flush".
#pragma once

#include <cstdint>
#include <string>

#include "gpuperf/status.h"

namespace gpuperf {

// Takes the writer's lock on the trace file open as `fd` (for writing) without waiting.
// kBusy (StillBeingRecorded) when another open file description holds it. Where the file
// system has no such locks (ENOLCK, EINVAL), there is nothing to enforce: Ok.
Status LockTraceFile(int fd, const std::string& path);

// Keeps every writer off the trace file open as `fd` (for reading) for as long as the
// caller keeps it open: a read lock, which excludes the writer's lock both ways (record
// --force holds one on each file it removes). kBusy when a process writes it now.
Status HoldTraceFile(int fd, const std::string& path);

// Whether another open file description, of any process (this one included), holds the
// writer's lock on the file open as `fd`: someone writes it now. The caller's own lock
// does not count.
bool TraceFileLocked(int fd);

// The pid in a trace file's name (<program>.<pid>.gpt, <program>.<pid>-N.gpt,
// <program>.<pid>.flight-N.gpt), or 0.
uint32_t PidInTraceName(const std::string& path);

// kBusy: "PATH is still being recorded by pid N" (pid 0: "by another process"), the one
// wording of every message about a file that is being written.
Status StillBeingRecorded(const std::string& path, uint32_t pid);

// Lets go of the trace files this process writes, in a child that fork() made (from a
// pthread_atfork child handler: async-signal-safe). The child never writes its parent's
// trace, and its copies of the descriptors would keep the lock, and the trace "being
// recorded", for as long as the child lives. The writers it copied are unusable in it.
void CloseTraceFilesInForkedChild();

}  // namespace gpuperf
