// What a full-screen, refreshing command (`gpuperf top`) needs from a terminal, with plain
// ANSI escapes and termios only (no curses: every terminal and ssh session of the last
// decades understands these few, and the static binary carries no terminfo database).
#pragma once

#include <termios.h>

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

namespace gpuperf::cli {

// SIGINT, SIGTERM and SIGHUP set the flag instead of ending the process, so the command
// restores the terminal (or closes its socket) and exits cleanly; SIGWINCH sets `resized`.
// The handlers do not restart system calls: a poll() in progress returns at once.
void InstallStopSignals();
bool StopRequested();
const std::atomic<bool>& StopFlag();
bool TakeResized();

class Terminal {
 public:
  // The alternate screen, no cursor, keys read one at a time without echo. Restored by the
  // destructor. Keys are read from stdin when it is a terminal, else there are none.
  Terminal();
  ~Terminal();
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  // Rows and columns of the terminal (80x24 when it will not say).
  void Size(size_t* rows, size_t* columns) const;

  // Redraws the whole screen with `lines` (already cut to the width).
  void Paint(const std::vector<std::string>& lines) const;

  // Waits up to `timeout_ms` for a key; returns it, or 0 on timeout, signal or no keyboard
  // (and q when the terminal hung up).
  int WaitKey(int timeout_ms) const;

 private:
  bool keys_ = false;
  termios saved_{};
};

}  // namespace gpuperf::cli
