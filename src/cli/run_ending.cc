#include "cli/run_ending.h"

#include <sys/wait.h>

#include <cstring>

namespace gpuperf::cli {

int RecordExitCode(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

std::string DescribeSignalEnding(int wait_status, const std::string& program, bool trace_finished,
                                 uint32_t flush_period_ms) {
  if (!WIFSIGNALED(wait_status)) return "";
  const int sig = WTERMSIG(wait_status);
  const char* abbrev = sigabbrev_np(sig);
  std::string line = "gpuperf: " + program + " was killed by signal " + std::to_string(sig) + " (" +
                     (abbrev ? "SIG" + std::string(abbrev) : std::string(strsignal(sig))) + ")";
  if (trace_finished) {
    line += " after gpuperf wrote all its records";
  } else {
    line += ": up to one flush period (" + std::to_string(flush_period_ms) +
            " ms) of records may be missing";
  }
  return line + "\n";
}

}  // namespace gpuperf::cli
