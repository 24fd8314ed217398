// The PC samples of a trace (`record --pc-sampling`), by kernel, instruction, source line and
// stall reason: what the report's hot lines, `gpuperf source` and the flame graph's
// --pc-frames read. Continuous sampling gives samples no launch: a kernel's samples are those
// of every launch of it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "gpuperf/records.h"
#include "gpuperf/status.h"

namespace gpuperf {

// "smsp__pcsamp_warps_issue_stalled_long_scoreboard" -> "long_scoreboard".
std::string ShortStallName(std::string_view cupti_name);

using StallCounts = std::map<std::string, uint64_t>;  // short stall name -> samples

// One instruction of a sampled kernel.
struct PcSite {
  uint64_t cubin_crc = 0;
  uint64_t pc_offset = 0;
  std::string file;  // empty, line 0: no line information
  uint32_t line = 0;
  std::string instruction;  // SASS text where nvdisasm was found at record time
  uint64_t samples = 0;
  uint64_t not_issued = 0;  // of `samples`: no instruction issued (base/stall_names.h)
  StallCounts stalls;       // without the "_not_issued" reasons
};

// Samples of one source line (or, without line information, of one instruction).
struct PcLineRow {
  std::string file;
  uint32_t line = 0;
  uint64_t pc_offset = 0;  // the line's first sampled instruction
  uint64_t samples = 0;
  uint64_t not_issued = 0;
  StallCounts stalls;
};

struct PcFunction {
  std::string name;  // mangled
  uint64_t samples = 0;
  uint64_t not_issued = 0;
  StallCounts stalls;
  std::vector<PcSite> sites;  // by (cubin, offset); instructions without samples too
  bool has_lines = false;     // some instruction has a source line

  // Lines by samples, most first (ties by file and line).
  std::vector<PcLineRow> Lines() const;
};

struct PcProfile {
  std::vector<PcFunction> functions;  // most samples first
  uint64_t samples = 0;
  const PcFunction* Find(std::string_view mangled) const;
};

// Gathers the records, in any order (lines may come after samples).
class PcProfileCollector {
 public:
  void AddSample(std::string_view function, uint64_t cubin_crc, uint64_t pc_offset,
                 std::string_view stall, uint64_t samples);
  void AddLine(std::string_view function, uint64_t cubin_crc, uint64_t pc_offset,
               std::string_view file, uint32_t line, std::string_view instruction);
  PcProfile Finish();

 private:
  using Key = std::tuple<std::string, uint64_t, uint64_t>;  // function, crc, offset
  std::map<Key, PcSite> sites_;
};

// Reads the PC sampling records of FILE or DIR (only those of `pid` when given).
Result<PcProfile> LoadPcProfile(const std::string& path, std::optional<uint32_t> pid = {});

}  // namespace gpuperf
