// Synthetic traces with the shape of a real recording (PyTorch-like kernel names,
// several threads, streams and devices, deep launch stacks), at any size. The analysis
// and export benchmarks run on them; nothing here is used by the profiler itself.
#pragma once

#include <cstdint>
#include <string>

#include "gpuperf/status.h"
#include "gpuperf/trace_writer.h"

namespace gpuperf::synth {

struct SyntheticOptions {
  uint64_t kernels = 10'000'000;
  uint32_t pid = 4242;
  uint32_t threads = 4;
  uint32_t streams_per_device = 4;
  uint32_t devices = 2;
  uint32_t kernel_names = 120;
  uint32_t unique_stacks = 300;
  uint32_t min_stack_depth = 10;
  uint32_t max_stack_depth = 40;
  uint32_t memcpy_every = 40;  // one copy per this many kernels
  uint64_t seed = 1;
  bool api_records = true;
  bool symbols = true;
  // A rank of a distributed job (a RankRecord as torchrun would leave it); -1: no rank record.
  int32_t rank = -1;
  int32_t world_size = 1;
};

// Writes a synthetic process into `writer` (does not close it).
void WriteSynthetic(TraceWriter& writer, const SyntheticOptions& options);

// Creates `path` and writes a synthetic trace into it.
Status WriteSyntheticTrace(const std::string& path, const SyntheticOptions& options);

}  // namespace gpuperf::synth
