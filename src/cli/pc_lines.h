// After a `record --pc-sampling` run: every sampled instruction mapped to its source line from
// the cubin the injection library saved (analyze/symbols/cubin_lines.h), and, where nvdisasm is
// found (GPUPERF_NVDISASM, PATH, the CUDA toolkit), every instruction of the sampled kernels with
// its SASS text. Stored in each trace as SassLineRecords, so the trace alone shows them later.
#pragma once

#include <string>

#include "gpuperf/status.h"

namespace gpuperf::cli {

Status ResolvePcSampleLines(const std::string& dir, bool quiet);

}  // namespace gpuperf::cli
