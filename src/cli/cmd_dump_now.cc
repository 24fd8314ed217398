// gpuperf dump-now PID: asks a process that `gpuperf record --flight` runs to write its
// flight recorder's window now, waits for the dump and prints its path.
//
// No signal is needed: the recorder's writer thread watches its output directory for
// DIR/.gpuperf-flight-PID.request and takes it by removing it; DIR/.gpuperf-flight-PID
// counts the dumps and names the newest. Only when the request cannot be made (the
// directory is not writable from here) or is not taken within 5 s is the flight signal
// sent, and only to a process that catches it.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "base/text_escape.h"
#include "cli/command.h"
#include "cli/record_flight.h"
#include "cli/record_options.h"

namespace gpuperf::cli {
namespace {

struct DumpNowArgs {
  uint32_t pid = 0;
  double timeout_s = 60;
  bool no_symbolize = false;
};

// The key=value lines of a file; false if it cannot be read.
bool ReadKeyValues(const std::string& path, char separator,
                   std::map<std::string, std::string>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::string entry;
  while (std::getline(in, entry, separator)) {
    const size_t equals = entry.find('=');
    if (equals != std::string::npos) (*out)[entry.substr(0, equals)] = entry.substr(equals + 1);
  }
  return true;
}

uint64_t Number(const std::map<std::string, std::string>& values, const std::string& key) {
  auto it = values.find(key);
  return it == values.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
}

// Whether `pid` has a handler for `signal` (SigCgt in /proc/PID/status): never send a
// signal whose default action would end the process.
bool CatchesSignal(uint32_t pid, int signal) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("SigCgt:", 0) == 0) {
      const uint64_t mask = std::strtoull(line.c_str() + 7, nullptr, 16);
      return signal >= 1 && signal <= 64 && (mask >> (signal - 1) & 1) != 0;
    }
  }
  return false;
}

bool ProcessExists(uint32_t pid) {
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

struct FlightTarget {
  std::string dir;    // the recording's output directory, as reachable from here
  std::string state;  // DIR/.gpuperf-flight-PID
  int signal = 0;     // 0: none
};

Result<FlightTarget> FindFlightRecorder(uint32_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  if (access(proc.c_str(), F_OK) != 0) {
    return Error(StatusCode::kNotFound, "no process " + std::to_string(pid));
  }
  std::map<std::string, std::string> env;
  if (!ReadKeyValues(proc + "/environ", '\0', &env) || env.empty()) {
    return Error(StatusCode::kIoError, "cannot read " + proc +
                                           "/environ (run dump-now as the user who runs " +
                                           std::to_string(pid) + ", or as root)");
  }
  if (Number(env, "GPUPERF_FLIGHT_MS") == 0 || env["GPUPERF_OUTPUT_DIR"].empty()) {
    return Error(StatusCode::kInvalidArgument,
                 "process " + std::to_string(pid) + " was not started by gpuperf record --flight");
  }
  FlightTarget target;
  target.signal = static_cast<int>(Number(env, "GPUPERF_FLIGHT_SIGNAL"));
  const std::string name = "/.gpuperf-flight-" + std::to_string(pid);
  // The process may see another mount namespace (a container): its root is reachable here.
  for (const std::string& dir :
       {env["GPUPERF_OUTPUT_DIR"], proc + "/root" + env["GPUPERF_OUTPUT_DIR"]}) {
    if (access((dir + name).c_str(), R_OK) == 0) {
      target.dir = dir;
      target.state = dir + name;
      return target;
    }
  }
  return Error(StatusCode::kNotFound,
               "process " + std::to_string(pid) + " has no flight recorder running in " +
                   env["GPUPERF_OUTPUT_DIR"] + " (it starts when the process initializes CUDA)");
}

int RunDumpNow(const DumpNowArgs& args) {
  auto found = FindFlightRecorder(args.pid);
  if (!found.ok()) return ReportError(found.status());
  const FlightTarget& target = *found;
  std::map<std::string, std::string> state;
  ReadKeyValues(target.state, '\n', &state);
  const uint64_t dumps_before = Number(state, "dumps");

  const std::string request = target.state + ".request";
  const int fd = open(request.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd >= 0) close(fd);
  bool signalled = false;
  auto send_signal = [&](const char* why) {
    if (signalled || target.signal == 0 || !CatchesSignal(args.pid, target.signal)) return;
    if (kill(static_cast<pid_t>(args.pid), target.signal) == 0) {
      signalled = true;
      std::fprintf(stderr, "gpuperf: %s; sent %s instead\n", why,
                   SignalName(target.signal).c_str());
    }
  };
  if (fd < 0) send_signal(("cannot create " + request + ": " + std::strerror(errno)).c_str());

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(args.timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    state.clear();
    if (!ReadKeyValues(target.state, '\n', &state)) {
      if (!ProcessExists(args.pid) || access(target.state.c_str(), F_OK) != 0) {
        unlink(request.c_str());
        return ReportError(Error(StatusCode::kNotFound,
                                 "process " + std::to_string(args.pid) +
                                     " ended before it dumped; its exit dump is in " + target.dir));
      }
      continue;  // being replaced: read it again
    }
    if (Number(state, "dumps") > dumps_before && !state["last"].empty()) {
      std::string path = state["last"];
      if (target.dir != path.substr(0, target.dir.size())) {
        path = target.dir + path.substr(path.rfind('/'));  // seen through /proc/PID/root
      }
      if (!args.no_symbolize) {
        Status symbolized = SymbolizeRecording(path, /*quiet=*/false);
        if (!symbolized.ok()) {
          PrintWarning("symbolization failed: " + symbolized.message());
        }
      }
      // The name starts with the program's file name, which the program chose: escaped on a
      // terminal; exact for a script that reads it ($(gpuperf dump-now PID)).
      std::printf("%s\n", isatty(STDOUT_FILENO) ? DisplayText(path).c_str() : path.c_str());
      return kExitOk;
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(5) &&
        access(request.c_str(), F_OK) == 0) {
      send_signal("the recorder did not take the dump request in 5 s");
    }
  }
  unlink(request.c_str());
  return ReportError(
      Error(StatusCode::kIoError, "process " + std::to_string(args.pid) + " wrote no dump in " +
                                      std::to_string(static_cast<int>(args.timeout_s)) + " s"));
}

void RegisterDumpNow(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "dump-now",
      "Ask a process recorded with 'gpuperf record --flight' to write its flight recorder's\n"
      "window now; prints the dump's path when it is written");
  auto args = std::make_shared<DumpNowArgs>();
  cmd->add_option("pid", args->pid, "Process id of the recorded program")->required();
  cmd->add_option("--timeout", args->timeout_s, "Seconds to wait for the dump (default 60)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-symbolize", args->no_symbolize,
                "Leave stack addresses unresolved (gpuperf symbolize does it later)");
  cmd->callback([args, exit_code] { *exit_code = RunDumpNow(*args); });
}

}  // namespace

GPUPERF_COMMAND(16, RegisterDumpNow);

}  // namespace gpuperf::cli
