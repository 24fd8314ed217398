// The flight recorder's triggers and dumps (docs/flight-recorder.md). The writer thread
// owns one when `record --flight` is on; it feeds the ring (flight_ring.h) instead of a
// trace file, and writes a dump when asked:
//
//   - by the flight signal (SIGUSR2 unless --flight-signal): the handler only sets a bit
//     and wakes the writer (async-signal-safe), then passes the signal on to the handler
//     the program had installed before, if any;
//   - by `gpuperf dump-now PID`: it creates DIR/.gpuperf-flight-PID.request, which the
//     writer notices (inotify, else at its next period) and removes;
//   - by a CUDA call that returned an error (seen in the API callbacks), at most one such
//     dump per window;
//   - at exit (and at SIGINT/SIGTERM/SIGABRT, through the final flush).
//
// Each dump is its own file, PROG.PID.flight-N.gpt, written under a temporary name and
// renamed, so a reader never sees half of one. DIR/.gpuperf-flight-PID says how many dumps
// there are and the newest one's path (`dump-now` waits on it); it is removed at exit.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "inject/config.h"
#include "inject/flight/flight_ring.h"

namespace gpuperf::inject {

enum FlightTrigger : uint32_t {
  kFlightSignal = 1,
  kFlightRequest = 2,  // gpuperf dump-now
  kFlightCudaError = 4,
  kFlightExit = 8,
};

class FlightRecorder {
 public:
  // `trace_path` is where a normal recording would write (DIR/PROG.PID.gpt): dumps are
  // named after it.
  FlightRecorder(const Config& config, const std::string& trace_path, uint32_t pid);
  ~FlightRecorder();

  // The ring the writer feeds; the writer thread owns it as its TraceWriter.
  std::unique_ptr<FlightRing> MakeRing();

  // An fd the writer polls with its wake-up fd (inotify on DIR), or -1.
  int watch_fd() const { return watch_fd_; }

  // Async-signal-safe: notes a trigger; the caller wakes the writer.
  void Request(FlightTrigger why) { pending_.fetch_or(why, std::memory_order_release); }
  // Any thread: a CUDA call returned `code`; returns true if that asks for a dump (the
  // caller then wakes the writer). Never blocks.
  bool NoteCudaError(uint32_t api_name, int32_t code);

  // Writer thread: the triggers pending now (a request file is looked for when
  // `check_request_file`, or when the watch fd said something changed); clears them.
  uint32_t TakeTriggers(bool check_request_file);

  // Writer thread: writes the window that ends now. `ring` is the one MakeRing made,
  // already fed everything up to now (stats included). `why` is a FlightTrigger mask.
  void Dump(FlightRing& ring, uint32_t why, uint64_t now_ns);

  // Writer thread, at exit, after the last dump: removes the state file.
  void Finish();

 private:
  void WriteState(const std::string& last_path);

  Config config_;
  uint32_t pid_ = 0;
  std::string dir_;
  std::string base_;  // DIR/PROG.PID
  std::string state_path_;
  std::string request_path_;
  std::string request_name_;
  int watch_fd_ = -1;
  std::atomic<uint32_t> pending_{0};
  uint32_t dumps_ = 0;
  // CUDA errors: the first one since the last error dump, and when that dump was.
  std::atomic<uint64_t> error_{0};  // api_name << 32 | code, 0 = none
  std::atomic<uint64_t> last_error_dump_ns_{0};
  std::atomic<uint32_t> error_dumps_{0};
};

// Installs the flight signal's handler (chaining to the program's previous one), which
// calls `on_signal` (async-signal-safe) when it arrives. Returns false, saying why in one
// line, for a signal gpuperf already handles or cannot catch.
bool InstallFlightSignal(int signal, void (*on_signal)());

// Whether a CUDA return code is a failure worth a dump: not success, and not the codes
// that report a state rather than a failure (not ready, already mapped/enabled).
bool IsCudaFailure(int32_t code);

}  // namespace gpuperf::inject
