// The file-backed TraceWriter, for the ways of opening a trace other than
// TraceWriter::Create: appending (trace_append.cc) positions the file itself first.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "gpuperf/trace_writer.h"

namespace gpuperf::format {

// A writer that owns `fd` (open for writing, positioned where the next chunk goes, the file
// header already there). InternString hands out ids from `first_string_id` on.
std::unique_ptr<TraceWriter> WriterOnOpenFile(int fd, TraceWriterOptions options,
                                              StringId first_string_id);

// Appends one whole chunk to `out`: its header (file_format.h) and `raw`, compressed with
// `zstd_cctx` (a ZSTD_CCtx) at `level`. What every writer writes, and what the flight
// recorder keeps in memory until it dumps (TraceWriter::AddChunk takes it as it is).
void FrameChunk(uint16_t type, uint32_t record_count, std::string_view raw, void* zstd_cctx,
                int level, std::string& out);

}  // namespace gpuperf::format
