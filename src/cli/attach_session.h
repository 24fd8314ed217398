// One process `gpuperf attach` records (docs/attach.md): the checks, the library loaded and
// the window started (src/attach/injector.h), then what the window's state file says until it
// ends. The window ends by itself after --duration, when asked (the stop file), or when gpuperf
// is gone; the process going away ends it too.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpuperf/status.h"

namespace gpuperf::cli {

struct AttachRequest {
  std::string library;   // libgpuperf_inject.so for a process that has none loaded yet
  std::string dir;       // the output directory (absolute)
  std::string settings;  // record's GPUPERF_* settings, one NAME=VALUE per line
  uint64_t duration_ms = 0;    // 0: until asked to stop
  uint64_t at_realtime_ns = 0;  // 0: at once
  bool quiet = false;
};

class AttachSession {
 public:
  // Checks `pid`, loads the library there and waits until the window records (or waits for
  // --at). An error is the one line that says why not; kNotFound: no such process.
  static Result<std::unique_ptr<AttachSession>> Start(pid_t pid, const AttachRequest& request);
  ~AttachSession();

  // Whether the window has ended (its state says done, or the process is gone). Never blocks.
  bool Ended();
  // Asks the window to end now (Ctrl-C).
  void AskToStop();
  // After it ended: one line when something went other than planned (the process exited
  // during the window, the trace was left unfinished), else empty; and the library's own
  // lines from the window, each prefixed with the pid.
  std::string Outcome() const;
  std::string LibraryLines() const;

  pid_t pid() const { return pid_; }
  const std::string& name() const { return name_; }
  const std::string& trace() const { return trace_; }

 private:
  AttachSession() = default;
  std::map<std::string, std::string> ReadState() const;

  pid_t pid_ = 0;
  std::string name_;
  std::string state_path_, stop_path_, log_path_;
  std::string trace_;
  bool gone_ = false;  // the process ended before its window did
  std::map<std::string, std::string> last_;
};

// One NAME=VALUE line per variable of record's environment that the library reads
// (GPUPERF_*), for `settings`.
std::string AttachSettingsText(const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace gpuperf::cli
