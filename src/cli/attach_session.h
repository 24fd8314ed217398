// One process `gpuperf attach` records (docs/attach.md): the library loaded and the window
// started (src/attach/injector.h), then what the window's state file says until it ends. The
// window ends by itself after --duration, when asked (the stop file), or when gpuperf is
// gone; the process going away ends it too.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "attach/target.h"
#include "gpuperf/attach_protocol.h"
#include "gpuperf/status.h"

namespace gpuperf::cli {

struct AttachRequest {
  std::string library;          // libgpuperf_inject.so for a process that has none loaded yet
  std::string dir;              // the output directory (absolute)
  std::string settings;         // record's GPUPERF_* settings, one NAME=VALUE per line
  uint64_t duration_ms = 0;     // 0: until asked to stop
  uint64_t at_realtime_ns = 0;  // 0: at once
  uint64_t grace_ms = kDefaultAttachGraceMs;
};

class AttachSession {
 public:
  // Loads the library into `target` (checked by attach::InspectTarget) and waits until its
  // window records, or waits for --at. An error is the one line that says why not;
  // kNotFound: the process exited meanwhile.
  static Result<std::unique_ptr<AttachSession>> Start(const attach::Target& target,
                                                      const AttachRequest& request);
  ~AttachSession();

  enum class Phase { kWaiting, kRecording, kEnded };
  // Where the window is now (its state says, or the process is gone). Never blocks.
  Phase Poll();
  // Asks the window to end now (Ctrl-C).
  void AskToStop();
  // gpuperf leaves before the window ended: its files stay for the library to finish.
  void Abandon() { state_path_ = stop_path_ = log_path_ = ""; }
  // After it ended: one line when something went other than planned (the process exited
  // during the window, the window never began, the trace was left unfinished), else empty.
  std::string Outcome() const;
  // The library's own lines from the window (its log file).
  std::string LibraryLines() const;
  // How CUPTI was left (cupti/detach.h), for the "detached" line: empty when finalized.
  std::string DetachNote() const;
  // Whether the window wrote a trace.
  bool Recorded() const { return !trace_.empty() && !never_began_; }

  Phase phase() const { return phase_; }
  pid_t pid() const { return pid_; }
  // "process PID (NAME)".
  std::string Who() const;
  const std::string& trace() const { return trace_; }
  // How the library was loaded: the thread borrowed and where it was.
  const std::string& loaded_through() const { return loaded_through_; }

 private:
  AttachSession() = default;
  std::map<std::string, std::string> ReadState() const;
  std::string Get(const char* key) const;

  pid_t pid_ = 0;
  std::string name_;
  std::string state_path_, stop_path_, log_path_;
  std::string trace_;
  std::string loaded_through_;
  bool gone_ = false;         // the process ended before its window did
  bool never_began_ = false;  // stopped while waiting for --at
  Phase phase_ = Phase::kWaiting;
  std::map<std::string, std::string> last_;
};

// The window's files in its output directory: this name with .state (how it goes), .stop
// (gpuperf asks it to end) and .log (the library's lines, open in the process while the window
// is: dump-now finds a window by it).
std::string AttachFilesName(uint32_t pid);

// One NAME=VALUE line per variable of record's environment that the library reads
// (GPUPERF_*), for `settings`.
std::string AttachSettingsText(const std::vector<std::pair<std::string, std::string>>& env);

}  // namespace gpuperf::cli
