// `gpuperf dump`: every record of a trace as one line of stable, readable text, for
// people and for test diffs. Strings are shown inline, quoted and escaped.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "gpuperf/status.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

// Streams the trace at `path` to `out`, followed by "# ..." lines that summarize what
// the reader saw (chunks, damage). Returns the reader's status.
Status DumpTrace(const std::string& path, std::ostream& out, ReadReport* report);

// Appends `text` quoted: quotes and backslashes escaped, newline, tab and CR as \n \t \r,
// and every other byte of a control character or of something that is not UTF-8 as \xNN
// (base/text_escape.h).
void AppendQuoted(std::string& out, std::string_view text);

}  // namespace gpuperf
