// Which injection library `record` gives the program, and whether it is ours. CUDA loads
// whatever CUDA_INJECTION64_PATH names and says nothing when it is not a CUDA tool (or not a
// library at all): the program then runs unrecorded, and gpuperf could only report that it
// "never initialized CUDA". So the file is read first, never loaded.
#pragma once

#include <string>

#include "gpuperf/status.h"

namespace gpuperf::cli {

// The library: `explicit_path` (--inject-lib), else $GPUPERF_INJECT_LIB, else the first of the
// usual places next to the gpuperf binary. Its canonical path, or why there is none.
Result<std::string> FindInjectionLibrary(const std::string& explicit_path);

// Whether `path` is a shared library for this machine that exports gpuperf's entry point
// (InitializeInjection) and its marker (gpuperf_launch_marker): read from its ELF header and
// dynamic symbol table. The error says what it is instead, naming it as `name` does.
Status CheckInjectionLibrary(const std::string& path, const std::string& name);

}  // namespace gpuperf::cli
