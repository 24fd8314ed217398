// A recorded program whose trace holds nothing: what `record` says instead of "never
// initialized CUDA" or an empty summary, and why, as far as it can tell from outside (the
// file size limit, `ulimit -f`, which the program inherits, or a full file system). The
// injection library's own line on the program's stderr says what failed.
#pragma once

#include <string>

namespace gpuperf::cli {

// Whether `dir` has trace files but no whole chunk in any of them: they were created, and
// nothing more could be written.
bool TraceFilesHoldNothing(const std::string& dir);

// "the file system of DIR is full (0 B free)" or "... has no free inodes"; "" otherwise.
std::string FullFileSystem(const std::string& dir);

// The line for a trace that holds nothing: "gpuperf: the trace could not be written: WHY".
std::string DescribeUnwrittenTrace(const std::string& dir);

}  // namespace gpuperf::cli
