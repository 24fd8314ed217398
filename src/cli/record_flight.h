// `gpuperf record --flight` and `--sample-launches` (docs/flight-recorder.md): checking what
// was typed, and what `record` says after a flight recording.
#pragma once

#include <cstdint>
#include <string>

#include "gpuperf/status.h"

namespace gpuperf::cli {

struct FlightSettings {
  uint64_t window_ms = 0;  // 0: no flight recorder
  uint32_t memory_mb = 0;  // 0: the default
  int signal = 0;          // the dump signal's number; -1: none
  bool on_error = true;
  uint32_t sample_launches_per_s = 0;  // 0: every launch's stack
};

// "USR2", "SIGUSR2", "12", "RTMIN+2", or "none" (-1). Refuses the signals that end a run
// (gpuperf flushes at those) and those that cannot be caught.
Result<int> ParseFlightSignal(const std::string& text);

// A signal's name for messages: "SIGUSR2", "SIGRTMIN+2", "signal 40".
std::string SignalName(int signal);

// After a flight recording of `dir`: the dumps each process wrote, and the totals of the
// main process's last dump (its exit dump when it ended normally).
std::string DescribeFlightRecording(const std::string& dir, uint32_t main_pid, bool* finished);

}  // namespace gpuperf::cli
