// Work on a trace one file at a time: the files ReadTrace reads of FILE or DIR, and a pool
// that runs a task per file on the machine's cores. Each file of a job is one process (or
// one flight-recorder window of one), so what is computed per file needs no other file.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "gpuperf/status.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

// FILE itself, or DIR's trace files as ReadTrace reads them (format/trace_directory.h: each
// once, copies left out with a warning in `report`). An error when DIR holds none that can
// be read.
Result<std::vector<std::string>> TraceFilesOf(const std::string& path, ReadReport& report);

// Runs task(i) once for every i < count, on up to `threads` threads (0: one per core) of
// which the caller's is one; returns when all are done.
void ForEachIndex(size_t count, unsigned threads, const std::function<void(size_t)>& task);

// The reading threads (ReadOptions::threads) of each of `files` read at once by
// ForEachIndex: the cores shared between them, at least one each (the reader decodes on
// every core by default, and a thread per core per file would crowd them).
unsigned ReadThreadsPerFile(size_t files);

}  // namespace gpuperf
