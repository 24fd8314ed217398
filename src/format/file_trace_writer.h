// The file-backed TraceWriter, for the ways of opening a trace other than
// TraceWriter::Create: appending (trace_append.cc) positions the file itself first.
#pragma once

#include <memory>

#include "gpuperf/trace_writer.h"

namespace gpuperf::format {

// A writer that owns `fd` (open for writing, positioned where the next chunk goes, the file
// header already there). InternString hands out ids from `first_string_id` on.
std::unique_ptr<TraceWriter> WriterOnOpenFile(int fd, TraceWriterOptions options,
                                              StringId first_string_id);

}  // namespace gpuperf::format
