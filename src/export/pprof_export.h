// pprof export: GPU work as a profile for `go tool pprof`, Pyroscope, Parca and the other
// readers of pprof's profile.proto.
//
// One sample per launch site (analyze/flame/launch_costs.h) with three values: GPU time (ns,
// the default), the number of GPU activities, and the CPU time of the API calls that
// launched them (ns). Its stack, leaf first: the kernel, copy or set as "[gpu] <name>"
// (the mangled name as system_name), the graph ("[graph N]") of a graph launch, the
// launch API, then the launching CPU stack as the flame graph shows it (Python frames
// merged in, analyze/symbols/symbol_table.h). Locations come pre-symbolized: a native PC is one
// Location in the Mapping of the module it lies in (path, build id, address range from the
// trace's module records), with one Line per function inlined at it (innermost first); a
// Python frame is a Location without a mapping whose function carries the file and line.
// Labels stay low-cardinality: pid, tid, device, stream. Output is the serialized
// Profile message, deterministic; pprof files are gzipped on disk (the caller's job). The
// sites, their costs and the join come from the analysis (analyze/flame/launch_profile.h);
// this file only writes them.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "analyze/flame/launch_profile.h"
#include "analyze/symbols/symbol_table.h"
#include "gpuperf/status.h"

namespace gpuperf {

struct PprofOptions {
  // How stacks read: the interpreter's own frames, the PyTorch view (symbol_table.h).
  StackDisplayOptions display;
};

struct PprofStats {
  uint64_t samples = 0;
  uint64_t locations = 0;
  uint64_t functions = 0;
  uint64_t mappings = 0;
  uint64_t activities = 0;  // GPU activities in the samples
};

// Writes the profile of `model` to `out`.
Status WritePprof(const LaunchProfile& model, const PprofOptions& options, std::ostream& out,
                  PprofStats* stats = nullptr);

}  // namespace gpuperf
