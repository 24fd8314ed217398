// A trace in which every string that a recorded program or its environment controls holds
// the bytes a test chose (command line, host, device and thread names, kernel, function,
// file and module names, Python code names and files, NVTX ranges and domains), in records
// that reach every output: a launch-bound phase of kernels (an insight that quotes the
// kernel and its stack), a synchronization and an allocation never freed (stacks printed
// in the report), an NVTX range around it all.
#pragma once

#include <string_view>

#include "gpuperf/trace.h"

namespace gpuperf::testing {

Trace HostileNamesTrace(std::string_view name);

}  // namespace gpuperf::testing
