// Several analyses of one trace, run together, read it once.
//
// RunSharingReads runs each task on a thread of its own. Every read of a trace file a task
// makes (ReadTrace, ReadTraceChunks, ReadTraceWith, on that thread) waits until every task
// still running is waiting in a read too; then reads that ask for the same trace and the
// same chunk types are served by one pass over the file, whose records go to each of their
// sinks in turn, on the thread of one of them. Each sink gets exactly the calls a read of
// its own would have given it, and each a copy of the same ReadReport, so every output is
// the one the task alone would write.
//
// Passes that read only some chunk types (a rank scan, a timeline's drawing pass) are
// served first, so that the reads of everything, which the tasks make after their small
// ones, meet in one pass: `gpuperf report RUN -o report.txt -o flame.svg -o
// timeline.perfetto-trace` decodes the trace once for the report, the flame graph and the
// timeline's first pass, and once more for what the timeline draws.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpuperf/status.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

struct SharedReadStats {
  uint32_t reads = 0;   // reads the tasks made
  uint32_t passes = 0;  // passes over a trace that served them
};

// Runs the tasks, each on its own thread, their trace reads shared; returns each one's
// result, in order, once all have ended.
std::vector<Status> RunSharingReads(const std::vector<std::function<Status()>>& tasks,
                                    SharedReadStats* stats = nullptr);

namespace format {

// Serves a read of a task of RunSharingReads; false when the calling thread is no such task
// (ReadTraceWith then reads on its own).
bool ReadShared(const std::string& path, const ReadOptions& options, RecordSink& sink,
                ReadReport* report, Status* status);

// One pass over a trace for one sink: what ReadTraceWith does for a thread of no task.
Status ReadTraceAlone(const std::string& path, const ReadOptions& options, RecordSink& sink,
                      ReadReport* report);

}  // namespace format
}  // namespace gpuperf
