// Adding chunks to a trace that was already written: the symbolizer stores symbols in the
// recording after the fact. Offline only: it reads the trace first, so it lives apart from
// TraceWriter::Create, which the injection library uses.
#pragma once

#include <memory>
#include <string>

#include "gpuperf/status.h"
#include "gpuperf/trace_writer.h"

namespace gpuperf {

// Opens one existing trace file to add chunks at its end. A damaged tail is cut off first
// so that new chunks stay readable; new strings get ids after the file's highest. The
// writer's lock (gpuperf/trace_lock.h) is taken before the file is read and held until the
// writer closes; a file that a process still writes is left alone: kBusy, one line naming
// the file and that pid (StillBeingRecorded).
Result<std::unique_ptr<TraceWriter>> AppendToTrace(const std::string& path,
                                                   TraceWriterOptions options = {});

}  // namespace gpuperf
