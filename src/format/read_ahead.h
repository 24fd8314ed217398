// Reading a trace on a second thread: `read` (one whole reading of a trace into a sink,
// ReadTrace and its kin) runs on a thread of its own, and what it reads reaches `sink` on
// the calling thread, batch by batch, in the order it was read. Decompressing, checking
// and decoding chunks then overlaps with what the sink does with the records.
//
// Records own their data, so each batch is handed over as a copy; at most kMaxBytes of
// them wait between the two threads.
#pragma once

#include <functional>

#include "gpuperf/status.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

Status ReadAhead(const std::function<Status(RecordSink&)>& read, RecordSink& sink);

}  // namespace gpuperf
