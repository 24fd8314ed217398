#include "cli/record_flight.h"

#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <vector>

#include "base/flight_signal.h"
#include "base/quantity.h"
#include "base/text_escape.h"
#include "base/units.h"
#include "cli/record_summary.h"

namespace gpuperf::cli {
namespace {

namespace fs = std::filesystem;

struct NamedSignal {
  const char* name;
  int number;
};
// Signal names (IsRefused says which cannot ask for dumps).
constexpr NamedSignal kSignals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ILL", SIGILL},     {"ABRT", SIGABRT},
    {"BUS", SIGBUS},   {"FPE", SIGFPE},   {"KILL", SIGKILL}, {"USR1", SIGUSR1},   {"SEGV", SIGSEGV},
    {"USR2", SIGUSR2}, {"PIPE", SIGPIPE}, {"ALRM", SIGALRM}, {"TERM", SIGTERM},   {"CHLD", SIGCHLD},
    {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"URG", SIGURG},   {"WINCH", SIGWINCH}, {"PWR", SIGPWR}};

bool AllDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// "PROG.PID.flight-N.gpt" -> (PID, N); false for any other name.
bool ParseDumpName(const std::string& name, uint32_t* pid, uint32_t* number) {
  const size_t flight = name.rfind(".flight-");
  if (flight == std::string::npos || !name.ends_with(".gpt")) return false;
  const std::string n = name.substr(flight + 8, name.size() - 4 - flight - 8);
  const size_t dot = name.rfind('.', flight - 1);
  if (dot == std::string::npos || !AllDigits(n)) return false;
  std::string p = name.substr(dot + 1, flight - dot - 1);
  if (const size_t dash = p.find('-'); dash != std::string::npos) p.resize(dash);  // PID-2
  if (!AllDigits(p)) return false;
  *pid = static_cast<uint32_t>(std::strtoul(p.c_str(), nullptr, 10));
  *number = static_cast<uint32_t>(std::strtoul(n.c_str(), nullptr, 10));
  return true;
}

}  // namespace

Result<int> ParseFlightSignal(const std::string& text) {
  if (text == "none") return -1;
  std::string name = text;
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name.starts_with("SIG")) name = name.substr(3);
  // Digits through the strict parser: "4294967308" is no signal, not SIGUSR2 after a wrap.
  const CountSpec any_signal{0, 64};
  int number = -1;
  if (AllDigits(name)) {
    if (auto n = ParseCount("", name, any_signal); n.ok()) number = static_cast<int>(*n);
  } else if (name.starts_with("RTMIN+") && AllDigits(name.substr(6))) {
    if (auto n = ParseCount("", name.substr(6), any_signal); n.ok()) {
      number = SIGRTMIN + static_cast<int>(*n);
    }
  } else if (name == "RTMIN") {
    number = SIGRTMIN;
  } else {
    for (const NamedSignal& s : kSignals) {
      if (name == s.name) number = s.number;
    }
  }
  if (number < 1 || number > SIGRTMAX) {
    return Error(
        StatusCode::kInvalidArgument,
        "--flight-signal " + text + ": not a signal (e.g. USR2, USR1, RTMIN+2, a number, or none)");
  }
  if (IsRefusedFlightSignal(number)) {
    return Error(StatusCode::kInvalidArgument,
                 "--flight-signal " + text + ": " + SignalName(number) +
                     " cannot ask for dumps (it ends or stops the program); use USR2, USR1 or "
                     "RTMIN+N");
  }
  return number;
}

std::string SignalName(int signal) {
  for (const NamedSignal& s : kSignals) {
    if (s.number == signal) return std::string("SIG") + s.name;
  }
  if (signal >= SIGRTMIN && signal <= SIGRTMAX) {
    return "SIGRTMIN+" + std::to_string(signal - SIGRTMIN);
  }
  return "signal " + std::to_string(signal);
}

std::string DescribeFlightRecording(const std::string& dir, uint32_t main_pid, bool* finished) {
  *finished = false;
  std::map<uint32_t, std::vector<std::pair<uint32_t, std::string>>> dumps;  // pid -> (N, path)
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    uint32_t pid = 0, number = 0;
    if (ParseDumpName(entry.path().filename().string(), &pid, &number)) {
      dumps[pid].emplace_back(number, entry.path().string());
    }
  }
  size_t total = 0;
  for (auto& [pid, list] : dumps) {
    std::sort(list.begin(), list.end());
    total += list.size();
  }
  std::string out = "gpuperf: flight recorder: " + FormatCount(total) +
                    (total == 1 ? " dump" : " dumps") + " from " + FormatCount(dumps.size()) +
                    (dumps.size() == 1 ? " process" : " processes") + " in " + dir +
                    " (each is a whole trace of its window; give report one dump, not the "
                    "directory)\n";
  auto main = dumps.find(main_pid);
  if (main == dumps.end()) {
    out += "  pid " + std::to_string(main_pid) + " wrote no dump\n";
    return out;
  }
  const std::string& last = main->second.back().second;
  // The dump's name starts with the program's file name, which the program chose.
  const std::string shown = DisplayText(last);
  auto totals = SummarizeRecording(last);
  if (!totals.ok()) {
    out += "  cannot read " + shown + ": " + DisplayText(totals.status().message()) + "\n";
    return out;
  }
  totals->bytes_on_disk = fs::file_size(last, ec);
  // The state file goes at exit, after the exit dump: one left behind means the process
  // ended without it (killed), and its last dump is an earlier one.
  const std::string state = dir + "/.gpuperf-flight-" + std::to_string(main_pid);
  const bool exit_dump = !fs::exists(state, ec);
  fs::remove(state, ec);
  *finished = exit_dump && totals->FinishedProcess(main_pid);
  if (!exit_dump) out += "  pid " + std::to_string(main_pid) + " ended without its exit dump\n";
  out += "  the last dump of pid " + std::to_string(main_pid) + ":\n";
  out += FormatRecordSummary(*totals, shown);
  return out;
}

}  // namespace gpuperf::cli
