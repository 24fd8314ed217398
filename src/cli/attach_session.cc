#include "cli/attach_session.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "attach/attach_steps.h"
#include "attach/injector.h"
#include "attach/target.h"
#include "gpuperf/attach_protocol.h"

namespace gpuperf::cli {
namespace {

constexpr auto kStartTimeout = std::chrono::seconds(30);

std::map<std::string, std::string> ReadKeyValues(const std::string& path) {
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const size_t equals = line.find('=');
    if (equals != std::string::npos) values[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return values;
}

std::string Process(pid_t pid, const std::string& name) {
  return "process " + std::to_string(pid) + " (" + name + ")";
}

// gpuperf_attach_start's answer as one line; empty when it started.
std::string StartRefusal(const attach::InjectOutcome& outcome, const attach::Target& target,
                         const std::string& library) {
  const std::string who = Process(target.pid, target.name);
  switch (outcome.start_result) {
    case kAttachStarted:
      return "";
    case attach::kNoLibrary:
      return "cannot load " + library + " into " + who + ": " +
             (outcome.load_error.empty() ? std::string("dlopen failed") : outcome.load_error) +
             (outcome.load_error.find("No such file") != std::string::npos
                  ? " (a process in another container sees other files: give --inject-lib a "
                    "path inside it)"
                  : "");
    case attach::kNoEntryPoint:
      return library + " loaded in " + who + " has no " + kAttachEntryPoint +
             ": it is an older gpuperf's library";
    case kAttachRecordedByRecord:
      return who +
             " is already recorded by gpuperf record: its trace has it all; with record "
             "--flight, `gpuperf dump-now " +
             std::to_string(target.pid) + "` writes its last window now";
    case kAttachWindowOpen:
      return who + " already has an attach window open: another gpuperf attach records it now";
    case kAttachBadSettings:
      return "the gpuperf library loaded in " + who + " (" + library +
             ") is another gpuperf version's: attach with that gpuperf";
    default:
      return "the attach window could not start in " + who + " (answer " +
             std::to_string(outcome.start_result) + ")";
  }
}

// The window's refusal (from its state file) as one line.
std::string WindowRefusal(const std::map<std::string, std::string>& state, const std::string& who) {
  auto get = [&state](const char* key) {
    auto it = state.find(key);
    return it == state.end() ? std::string() : it->second;
  };
  const std::string reason = get("reason");
  if (reason == "cupti_in_use") {
    return "another CUPTI client holds CUPTI in " + who + ": " + get("holder") +
           " (torch.profiler's Kineto, Nsight Systems or another tool), and CUPTI takes one; "
           "attach when it is done";
  }
  if (reason == "writer")
    return "the window in " + who + " cannot write its trace: " + get("message");
  return "CUPTI refused the window in " + who + " (see the lines above)";
}

std::string FormatMs(uint64_t us) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f ms", static_cast<double>(us) / 1000.0);
  return text;
}

}  // namespace

std::string AttachSettingsText(const std::vector<std::pair<std::string, std::string>>& env) {
  std::string text;
  for (const auto& [name, value] : env) {
    if (name.rfind("GPUPERF_", 0) != 0) continue;  // CUDA's, NVTX's, NCCL's, the preload's
    text += name + "=" + value + "\n";
  }
  return text;
}

std::string AttachFilesName(uint32_t pid) {
  return ".gpuperf-attach-" + std::to_string(pid);
}

Result<std::unique_ptr<AttachSession>> AttachSession::Start(const attach::Target& target,
                                                            const AttachRequest& request) {
  const pid_t pid = target.pid;
  std::unique_ptr<AttachSession> session(new AttachSession());
  session->pid_ = pid;
  session->name_ = target.name;
  const std::string base = request.dir + "/" + AttachFilesName(static_cast<uint32_t>(pid));
  session->state_path_ = base + ".state";
  session->stop_path_ = base + ".stop";
  session->log_path_ = base + ".log";
  for (const std::string& path : {session->state_path_, session->stop_path_, session->log_path_}) {
    unlink(path.c_str());
  }
  std::string settings = request.settings;
  settings += std::string(kAttachProtocolSetting) + "=" + std::to_string(kAttachProtocol) + "\n";
  settings += std::string(kAttachStateSetting) + "=" + session->state_path_ + "\n";
  settings += std::string(kAttachStopSetting) + "=" + session->stop_path_ + "\n";
  settings += std::string(kAttachLogSetting) + "=" + session->log_path_ + "\n";
  settings += std::string(kAttachInjectorSetting) + "=" + std::to_string(getpid()) + "\n";
  settings +=
      std::string(kAttachDurationSetting) + "=" + std::to_string(request.duration_ms) + "\n";
  settings += std::string(kAttachAtSetting) + "=" + std::to_string(request.at_realtime_ns) + "\n";
  settings += std::string(kAttachGraceSetting) + "=" + std::to_string(request.grace_ms) + "\n";
  // An earlier attach's library is used again: a second copy would fight it for CUPTI.
  attach::InjectOptions options;
  options.library = target.loaded_library.empty() ? request.library : target.loaded_library;
  options.settings = settings;
  GP_ASSIGN_OR_RETURN(attach::InjectOutcome outcome, attach::LoadAndStart(target, options));
  session->loaded_through_ = (target.loaded_library.empty() ? "loaded " : "reused ") +
                             options.library + " through thread " + std::to_string(outcome.thread) +
                             " (" + outcome.how + "), away from the program for " +
                             FormatMs(outcome.stopped_us);
  const std::string refusal = StartRefusal(outcome, target, options.library);
  if (!refusal.empty()) return Error(StatusCode::kInternal, refusal);
  // The window's thread says when it records (or why it cannot); --at makes it wait first.
  const std::string who = session->Who();
  const auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  for (;;) {
    session->last_ = session->ReadState();
    const std::string state = session->Get("state");
    if (state == "recording" || state == "waiting") break;
    if (state == "refused") return Error(StatusCode::kInternal, WindowRefusal(session->last_, who));
    if (state == "done" || !attach::ProcessRunning(pid)) {
      return Error(StatusCode::kNotFound, who + " exited during the attach");
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return Error(StatusCode::kInternal, "the attach window in " + who + " did not start within " +
                                              std::to_string(kStartTimeout.count()) + " s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  session->trace_ = session->Get("trace");
  session->phase_ = session->Get("state") == "recording" ? Phase::kRecording : Phase::kWaiting;
  attach::ReachStep(attach::AttachStep::kStarted);
  return session;
}

AttachSession::~AttachSession() {
  for (const std::string& path : {state_path_, stop_path_, log_path_}) {
    if (!path.empty()) unlink(path.c_str());
  }
}

std::map<std::string, std::string> AttachSession::ReadState() const {
  return ReadKeyValues(state_path_);
}

std::string AttachSession::Get(const char* key) const {
  auto it = last_.find(key);
  return it == last_.end() ? std::string() : it->second;
}

std::string AttachSession::Who() const {
  return Process(pid_, name_);
}

AttachSession::Phase AttachSession::Poll() {
  if (phase_ == Phase::kEnded) return phase_;
  last_ = ReadState();
  const std::string state = Get("state");
  if (trace_.empty() && !Get("trace").empty()) trace_ = Get("trace");
  if (state == "done") {
    never_began_ = Get("empty") == "1";
    phase_ = Phase::kEnded;
    attach::ReachStep(attach::AttachStep::kDone);
  } else if (!attach::ProcessRunning(pid_)) {
    gone_ = true;
    phase_ = Phase::kEnded;
  } else if (state == "recording") {
    phase_ = Phase::kRecording;
  }
  return phase_;
}

void AttachSession::AskToStop() {
  if (FILE* f = std::fopen(stop_path_.c_str(), "we")) std::fclose(f);
}

std::string AttachSession::Outcome() const {
  const std::string who = Who();
  if (gone_) return who + " ended during the window: its trace ends with it";
  if (Get("reason") == "exit") return who + " exited during the window: its trace ends with it";
  if (never_began_) return who + ": the window never began (stopped before --at); no trace";
  if (Get("closed") == "0") return who + ": its trace was not closed in time; it may lack its end";
  return "";
}

std::string AttachSession::DetachNote() const {
  const std::string cupti = Get("cupti");
  if (cupti == "pending") {
    return " (it made no CUDA call in the 2 s after the window: CUPTI is finalized at its next "
           "one)";
  }
  if (cupti == "unsubscribed") {
    return " (CUPTI unsubscribed, not finalized: a CUDA call stayed inside gpuperf's callback, "
           "or CUPTI refused the finalize)";
  }
  return "";
}

std::string AttachSession::LibraryLines() const {
  std::ifstream in(log_path_);
  std::string lines, line;
  while (std::getline(in, line)) lines += line + "\n";
  return lines;
}

}  // namespace gpuperf::cli
