// The files of a directory read as one trace (ReadTrace on a directory): every *.gpt in it,
// each file once and each recorded process once.
#pragma once

#include <string>
#include <vector>

#include "format/mapped_file.h"
#include "gpuperf/status.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf::format {

struct DirectoryTraceFile {
  std::string path;
  MappedFile file;
  uint32_t pid = 0;  // of its first process record; 0 when it has none (yet)
};

// Opens and maps every *.gpt of `dir`, sorted by name. Left out, with one warning each in
// `report`:
//  - a file that cannot be opened or is not a regular file (files_skipped; the first such
//    error is kept in `first_error`);
//  - the same file as one kept, reached through another name (a symbolic or hard link:
//    the same device and inode), and a file whose first process record (pid, start and
//    end) is another file's, a copy (files_duplicate). Of copies the largest is kept: a
//    copy taken while the process recorded holds less. Traces that gpuperf writes start
//    with the record of the process as it starts, unique to it; the flight recorder's dumps
//    of one process each start with a record of their own window.
// An empty list when `dir` holds no *.gpt at all (the caller says so).
Result<std::vector<DirectoryTraceFile>> OpenTraceDirectory(const std::string& dir,
                                                           ReadReport& report, Status& first_error);

}  // namespace gpuperf::format
