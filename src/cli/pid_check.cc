#include "cli/pid_check.h"

#include "analyze/ranks/rank_scan.h"

namespace gpuperf::cli {

Status CheckPidRecorded(const std::string& trace, uint32_t pid) {
  // Reads the process records only (ScanRanks), not the whole trace.
  Result<RankScan> scan = ScanRanks(trace);
  if (!scan.ok() || scan->processes.empty() || scan->processes.count(pid) != 0) {
    return Status::Ok();
  }
  constexpr size_t kListed = 10;
  std::string pids;
  size_t listed = 0;
  for (const auto& [recorded, identity] : scan->processes) {
    if (listed++ == kListed) break;
    pids += (pids.empty() ? "" : ", ") + std::to_string(recorded);
  }
  if (scan->processes.size() > kListed) {
    pids += " and " + std::to_string(scan->processes.size() - kListed) + " more";
  }
  const size_t count = scan->processes.size();
  return Error(StatusCode::kInvalidArgument,
               "--pid " + std::to_string(pid) + ": " + trace + " holds no process " +
                   std::to_string(pid) + " (its " + (count == 1 ? "process: " : "processes: ") +
                   pids + ")");
}

}  // namespace gpuperf::cli
