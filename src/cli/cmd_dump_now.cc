// gpuperf dump-now PID: asks a process that `gpuperf record --flight` runs to write its
// flight recorder's window now, waits for the dump and prints its path.
//
// No signal is needed: the recorder's writer thread watches its output directory for
// DIR/.gpuperf-flight-PID.request and takes it by removing it; DIR/.gpuperf-flight-PID
// counts the dumps and names the newest. Only when the request cannot be made (the
// directory is not writable from here) or is not taken within 5 s is the flight signal
// sent, and only to a process that catches it.
//
// Everything dump-now reads or writes is the target's: its environment, its directory (a
// path its environment names), its state file. Root therefore does all of that as the
// target's user (it drops to the process's uid, gids and groups first), so that a user
// cannot make root create, read or append to anything that user could not; and files are
// opened under the directory's descriptor without following links or waiting on a FIFO.
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <thread>

#include "base/process_owner.h"
#include "base/text_escape.h"
#include "base/units.h"
#include "cli/attach_session.h"
#include "cli/command.h"
#include "cli/quantity_options.h"
#include "cli/record_flight.h"
#include "cli/record_options.h"
#include "format/live_dir.h"

namespace gpuperf::cli {
namespace {

struct DumpNowArgs {
  uint32_t pid = 0;
  uint64_t timeout_ms = 60'000;
  bool no_symbolize = false;
};

// The environment of a process is at most a few MiB; the state file a few hundred bytes.
constexpr size_t kMaxEnvironmentBytes = 8u << 20;
constexpr size_t kMaxStateBytes = 64u << 10;

// Reads at most `limit` bytes of an open file; closes it.
std::string ReadAndClose(int fd, size_t limit) {
  std::string text;
  char buffer[8192];
  ssize_t n;
  while (text.size() < limit && (n = read(fd, buffer, sizeof(buffer))) > 0) {
    text.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  if (text.size() > limit) text.resize(limit);
  return text;
}

// The key=value entries of `text`, separated by `separator`.
std::map<std::string, std::string> KeyValues(const std::string& text, char separator) {
  std::map<std::string, std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(separator, at);
    if (end == std::string::npos) end = text.size();
    const std::string entry = text.substr(at, end - at);
    const size_t equals = entry.find('=');
    if (equals != std::string::npos) out[entry.substr(0, equals)] = entry.substr(equals + 1);
    at = end + 1;
  }
  return out;
}

uint64_t Number(const std::map<std::string, std::string>& values, const std::string& key) {
  auto it = values.find(key);
  return it == values.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
}

std::string Pid(uint32_t pid) {
  return "process " + std::to_string(pid);
}

// Whether `pid` has a handler for `signal` (SigCgt in /proc/PID/status): never send a
// signal whose default action would end the process.
bool CatchesSignal(uint32_t pid, int signal) {
  const int fd = open(("/proc/" + std::to_string(pid) + "/status").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const std::string status = ReadAndClose(fd, 65536);
  const size_t at = status.find("\nSigCgt:");
  if (at == std::string::npos) return false;
  const uint64_t mask = std::strtoull(status.c_str() + at + 8, nullptr, 16);
  return signal >= 1 && signal <= 64 && (mask >> (signal - 1) & 1) != 0;
}

bool ProcessExists(uint32_t pid) {
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// The process, running, and one whose files this user may act on. Says why not otherwise.
Result<ProcessOwner> CheckTarget(uint32_t pid) {
  bool zombie = false;
  const std::optional<ProcessOwner> owner = ReadProcessOwner(pid);
  if (live::ProcessStartTicks(pid, &zombie) == 0 || !owner) {
    return Error(StatusCode::kNotFound, "no " + Pid(pid) + " is running");
  }
  if (zombie) {
    return Error(StatusCode::kNotFound, Pid(pid) + " has exited (its parent has not reaped it)");
  }
  const uid_t me = geteuid();
  if (me != 0 && !owner->OnlyUser(me)) {
    return Error(StatusCode::kIoError,
                 Pid(pid) + " belongs to uid " + std::to_string(owner->uids[1]) +
                     ", not to you (uid " + std::to_string(me) +
                     "): dump-now asks only your own processes (run it as that user, or as root)");
  }
  return *owner;
}

// Root acting for another user's process becomes that user for good: every file dump-now
// touches from here on is one the process's user could touch. The user is the one who
// started the process (its real uid: whoever chose its environment), even when it runs
// set-uid as another.
Status BecomeOwner(uint32_t pid, const ProcessOwner& owner) {
  if (geteuid() != 0 || owner.OnlyUser(0)) return Status::Ok();
  const uid_t uid = owner.uids[0];
  const gid_t gid = owner.gids[0];
  if (setgroups(owner.groups.size(), owner.groups.data()) != 0 || setresgid(gid, gid, gid) != 0 ||
      setresuid(uid, uid, uid) != 0) {
    return Error(StatusCode::kIoError, "cannot act as uid " + std::to_string(uid) + " for " +
                                           Pid(pid) + " (" + std::strerror(errno) +
                                           "); its files are not touched as root");
  }
  return Status::Ok();
}

struct FlightTarget {
  std::string dir;  // the recording's output directory, as reachable from here
  int dir_fd = -1;  // every file below is opened under it
  std::string state_name;
  std::string request_name;
  uid_t uid = 0;   // the user the files must belong to
  int signal = 0;  // 0: none
};

// Why `name` in the target's directory is not a file the recorder (or dump-now) made.
std::string NotOurs(const FlightTarget& target, const std::string& name, const struct stat& st) {
  const std::string path = target.dir + "/" + name;
  if (S_ISLNK(st.st_mode)) return path + " is a symbolic link";
  if (!S_ISREG(st.st_mode)) return path + " is not a regular file";
  if (st.st_uid != target.uid) {
    return path + " belongs to uid " + std::to_string(st.st_uid) + ", not to the process's uid " +
           std::to_string(target.uid);
  }
  return "";
}

// The recorder's state file (key=value lines); false when it is not there (or not the
// recorder's). Never follows a link, never waits on a FIFO, reads a bounded amount.
bool ReadState(const FlightTarget& target, std::map<std::string, std::string>* state,
               std::string* why = nullptr) {
  const int fd = openat(target.dir_fd, target.state_name.c_str(),
                        O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const std::string path = target.dir + "/" + target.state_name;
    if (why)
      *why = errno == ELOOP ? path + " is a symbolic link" : path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  const std::string not_ours = fstat(fd, &st) == 0 ? NotOurs(target, target.state_name, st) : "?";
  if (!not_ours.empty()) {
    if (why) *why = not_ours;
    close(fd);
    return false;
  }
  *state = KeyValues(ReadAndClose(fd, kMaxStateBytes), '\n');
  return true;
}

// A process recorded by `gpuperf attach` has nothing of gpuperf in its environment: its
// window's output directory is found through the window's log file, which the process holds
// open for the window's length (DIR/.gpuperf-attach-PID.log). Empty when no window is open.
std::string AttachWindowDir(const std::string& proc, uint32_t pid) {
  const std::string suffix = "/" + AttachFilesName(pid) + ".log";
  DIR* fds = opendir((proc + "/fd").c_str());
  if (fds == nullptr) return "";
  std::string found;
  while (const dirent* entry = readdir(fds)) {
    char target[PATH_MAX];
    const std::string link = proc + "/fd/" + entry->d_name;
    const ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
    if (n <= 0) continue;
    const std::string path(target, static_cast<size_t>(n));
    if (path.size() > suffix.size() && path.ends_with(suffix)) {
      found = path.substr(0, path.size() - suffix.size());
      break;
    }
  }
  closedir(fds);
  return found;
}

Result<FlightTarget> FindFlightRecorder(uint32_t pid, const ProcessOwner& owner) {
  const std::string proc = "/proc/" + std::to_string(pid);
  const int env_fd = open((proc + "/environ").c_str(), O_RDONLY | O_CLOEXEC);
  if (env_fd < 0) {
    // As the process's own user (or root), only a process that made itself undumpable (a
    // set-uid program, or prctl) refuses: nothing says what it runs.
    const int error = errno;
    std::string why = "cannot read " + proc + "/environ: " + std::strerror(error);
    if (error == EACCES) {
      why += " (" + Pid(pid) + " lets no one read it, so dump-now cannot find its recording)";
    }
    return Error(StatusCode::kIoError, why);
  }
  std::map<std::string, std::string> env =
      KeyValues(ReadAndClose(env_fd, kMaxEnvironmentBytes), '\0');
  std::string output_dir = env["GPUPERF_OUTPUT_DIR"];
  const bool attached = output_dir.empty();
  if (attached) output_dir = AttachWindowDir(proc, pid);
  if (output_dir.empty()) {
    return Error(StatusCode::kInvalidArgument,
                 Pid(pid) +
                     " is not recorded by gpuperf (start it with gpuperf record --flight "
                     "WINDOW -- PROGRAM, or gpuperf attach --flight WINDOW " +
                     std::to_string(pid) + ")");
  }
  if (!attached && Number(env, "GPUPERF_FLIGHT_MS") == 0) {
    return Error(StatusCode::kInvalidArgument,
                 Pid(pid) +
                     " is recorded by gpuperf without --flight: it keeps no window to "
                     "dump (record it with --flight WINDOW)");
  }
  FlightTarget target;
  target.uid = owner.fs_uid();
  // An attach window installs no signal handler: the request file is the only way.
  target.signal = attached ? 0 : static_cast<int>(Number(env, "GPUPERF_FLIGHT_SIGNAL"));
  target.state_name = ".gpuperf-flight-" + std::to_string(pid);
  target.request_name = target.state_name + ".request";
  // The process may see another mount namespace (a container): its root is reachable here.
  for (const std::string& dir : {output_dir, proc + "/root" + output_dir}) {
    const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstatat(fd, target.state_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      target.dir = dir;
      target.dir_fd = fd;
      return target;
    }
    if (fd >= 0) close(fd);
  }
  if (attached) {
    return Error(StatusCode::kInvalidArgument,
                 Pid(pid) + " has an attach window open in " + output_dir +
                     " without --flight: it keeps no window to dump (gpuperf attach --flight "
                     "WINDOW)");
  }
  return Error(StatusCode::kNotFound,
               Pid(pid) +
                   " is recorded with --flight, but its flight recorder is not running yet "
                   "in " +
                   output_dir + " (it starts when the process initializes CUDA)");
}

// Creates the request file, never through a link and never over a file that is not one.
// Returns 1 when made, 0 when a request of the recorder's user is already waiting, -1 when it
// cannot be made (errno); an error for a file in the way that is not a request.
Result<int> MakeRequest(const FlightTarget& target) {
  const int fd = openat(target.dir_fd, target.request_name.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd >= 0) {
    close(fd);
    return 1;
  }
  const int error = errno;
  struct stat st;
  if (error == EEXIST &&
      fstatat(target.dir_fd, target.request_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    const std::string not_ours = NotOurs(target, target.request_name, st);
    if (!not_ours.empty()) {
      return Error(StatusCode::kIoError,
                   not_ours + ", not a dump request: left alone, no dump asked for");
    }
    return 0;
  }
  errno = error;
  return -1;
}

int RunDumpNow(const DumpNowArgs& args) {
  auto owner = CheckTarget(args.pid);
  if (!owner.ok()) return ReportError(owner.status());
  if (Status status = BecomeOwner(args.pid, *owner); !status.ok()) return ReportError(status);
  auto found = FindFlightRecorder(args.pid, *owner);
  if (!found.ok()) return ReportError(found.status());
  const FlightTarget& target = *found;
  std::map<std::string, std::string> state;
  std::string why;
  if (!ReadState(target, &state, &why)) {
    return ReportError(Error(StatusCode::kIoError, why + ": not the flight recorder's state"));
  }
  const uint64_t dumps_before = Number(state, "dumps");

  auto made = MakeRequest(target);
  if (!made.ok()) return ReportError(made.status());
  const bool requested = *made == 1;
  auto take_back = [&] {
    if (requested) unlinkat(target.dir_fd, target.request_name.c_str(), 0);
  };
  bool signalled = false;
  auto send_signal = [&](const char* why) {
    if (signalled || target.signal == 0 || !CatchesSignal(args.pid, target.signal)) return;
    if (kill(static_cast<pid_t>(args.pid), target.signal) == 0) {
      signalled = true;
      std::fprintf(stderr, "gpuperf: %s; sent %s instead\n", why,
                   SignalName(target.signal).c_str());
    }
  };
  if (*made < 0) {
    send_signal(
        ("cannot create " + target.dir + "/" + target.request_name + ": " + std::strerror(errno))
            .c_str());
  }

  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(args.timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    state.clear();
    if (!ReadState(target, &state)) {
      struct stat st;
      if (!ProcessExists(args.pid) ||
          fstatat(target.dir_fd, target.state_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        take_back();
        return ReportError(
            Error(StatusCode::kNotFound,
                  Pid(args.pid) + " ended before it dumped; its exit dump is in " + target.dir));
      }
      continue;  // being replaced: read it again
    }
    if (Number(state, "dumps") > dumps_before && !state["last"].empty()) {
      // The dump is beside the state file (the recorder names it by the path it sees, which
      // differs when the process is in a container).
      const std::string& last = state["last"];
      const std::string path = target.dir + "/" + last.substr(last.rfind('/') + 1);
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
    struct stat st;
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(5) &&
        fstatat(target.dir_fd, target.request_name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      send_signal("the recorder did not take the dump request in 5 s");
    }
  }
  take_back();
  return ReportError(Error(StatusCode::kIoError, Pid(args.pid) + " wrote no dump in " +
                                                     FormatDuration(args.timeout_ms * kNsPerMs)));
}

void RegisterDumpNow(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "dump-now",
      "Ask a process recorded with 'gpuperf record --flight' to write its flight recorder's\n"
      "window now; prints the dump's path when it is written");
  auto args = std::make_shared<DumpNowArgs>();
  TakesCount(cmd->add_option("pid", args->pid, "Process id of the recorded program"), kPidSpec)
      ->required();
  TakesDuration(cmd->add_option("--timeout", args->timeout_ms,
                                "How long to wait for the dump: seconds, or with a unit (1ms to "
                                "24h; default 60)"),
                kNsPerMs, {kNsPerSecond, kNsPerMs, 24 * kNsPerHour});
  cmd->add_flag("--no-symbolize", args->no_symbolize,
                "Leave stack addresses unresolved (gpuperf symbolize does it later)");
  cmd->callback([args, exit_code] { *exit_code = RunDumpNow(*args); });
}

}  // namespace

GPUPERF_COMMAND(16, RegisterDumpNow);

}  // namespace gpuperf::cli
