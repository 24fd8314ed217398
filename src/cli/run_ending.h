// How the recorded command ended, as `gpuperf record` reports it: the exit status it passes
// on (the command's own; 128+N for a signal N, as shells do) and one honest line about a
// command that a signal ended.
#pragma once

#include <cstdint>
#include <string>

namespace gpuperf::cli {

// The exit status for a waitpid() status.
int RecordExitCode(int wait_status);

// The line to print when a signal ended the command, or "" when it exited by itself.
// `trace_finished`: the command's own trace holds its final flush (gpuperf's handler ran,
// as for SIGTERM and SIGINT); otherwise up to one flush period of records may be missing.
std::string DescribeSignalEnding(int wait_status, const std::string& program, bool trace_finished,
                                 uint32_t flush_period_ms);

}  // namespace gpuperf::cli
