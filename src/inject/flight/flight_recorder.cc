#include "inject/flight/flight_recorder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string_view>

#include "base/flight_signal.h"
#include "inject/log.h"
#include "inject/recorder.h"
#include "inject/stats.h"

namespace gpuperf::inject {
namespace {

// At most this many dumps for CUDA errors in one process: a program that fails in a loop
// must not fill the disk.
constexpr uint32_t kMaxErrorDumps = 16;

const char* TriggerName(uint32_t why) {
  if (why & kFlightExit) return "at exit";
  if (why & kFlightCudaError) return "after a CUDA error";
  if (why & kFlightRequest) return "for gpuperf dump-now";
  return "on its signal";
}

void (*g_on_flight_signal)() = nullptr;
struct sigaction g_previous_action;

void OnFlightSignal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (g_on_flight_signal != nullptr) g_on_flight_signal();
  errno = saved_errno;
  // The program's own handler still runs: the signal may mean something to it too.
  const struct sigaction& old = g_previous_action;
  if (old.sa_flags & SA_SIGINFO) {
    if (old.sa_sigaction != nullptr) old.sa_sigaction(sig, info, context);
  } else if (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN && old.sa_handler != nullptr) {
    old.sa_handler(sig);
  }
}

}  // namespace

FlightRecorder::FlightRecorder(const Config& config, const std::string& trace_path, uint32_t pid)
    : config_(config), pid_(pid) {
  const size_t slash = trace_path.rfind('/');
  dir_ = slash == std::string::npos ? "." : trace_path.substr(0, slash);
  base_ = trace_path.ends_with(".gpt") ? trace_path.substr(0, trace_path.size() - 4) : trace_path;
  const std::string name = ".gpuperf-flight-" + std::to_string(pid);
  state_path_ = dir_ + "/" + name;
  request_name_ = name + ".request";
  request_path_ = dir_ + "/" + request_name_;
  unlink(request_path_.c_str());  // one left by an earlier process with this pid
  watch_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (watch_fd_ >= 0 && inotify_add_watch(watch_fd_, dir_.c_str(), IN_CREATE | IN_MOVED_TO) < 0) {
    close(watch_fd_);
    watch_fd_ = -1;  // the writer's period checks for the request instead
  }
  WriteState("");
}

FlightRecorder::~FlightRecorder() {
  if (watch_fd_ >= 0) close(watch_fd_);
}

std::unique_ptr<FlightRing> FlightRecorder::MakeRing() {
  FlightRingOptions options;
  options.window_ns = config_.flight_window_ms * 1'000'000ull;
  options.memory_cap_bytes = config_.flight_memory_bytes;
  return std::make_unique<FlightRing>(options, MonotonicNs);
}

bool IsCudaFailure(int32_t code) {
  switch (code) {
    case 0:    // success
    case 4:    // cudaErrorCudartUnloading / CUDA_ERROR_DEINITIALIZED: the process is ending
    case 600:  // not ready: a query's answer, not a failure
    case 704:  // peer access already enabled
    case 712:  // host memory already registered
      return false;
    default:
      return true;
  }
}

bool FlightRecorder::NoteCudaError(uint32_t api_name, int32_t code) {
  if (!config_.flight_on_error || !IsCudaFailure(code) ||
      error_dumps_.load(std::memory_order_relaxed) >= kMaxErrorDumps) {
    return false;
  }
  const uint64_t last = last_error_dump_ns_.load(std::memory_order_relaxed);
  if (last != 0 && MonotonicNs() - last < config_.flight_window_ms * 1'000'000ull) {
    return false;  // the last error's dump is still recent: one per window
  }
  uint64_t none = 0;
  const uint64_t error = uint64_t{api_name} << 32 | static_cast<uint32_t>(code);
  if (!error_.compare_exchange_strong(none, error)) return false;  // one already pending
  Request(kFlightCudaError);
  return true;
}

uint32_t FlightRecorder::TakeTriggers(bool check_request_file) {
  if (watch_fd_ >= 0) {
    alignas(inotify_event) char events[4096];
    ssize_t n;
    while ((n = read(watch_fd_, events, sizeof(events))) > 0) {
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(events + at);
        if (event->len > 0 && request_name_ == event->name) check_request_file = true;
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
  }
  // Removing the request is what takes it: one dump per request file.
  if (check_request_file && unlink(request_path_.c_str()) == 0) Request(kFlightRequest);
  return pending_.exchange(0, std::memory_order_acquire);
}

void FlightRecorder::Dump(FlightRing& ring, uint32_t why, uint64_t now_ns) {
  std::string path;
  do {
    path = base_ + ".flight-" + std::to_string(++dumps_) + ".gpt";
  } while (access(path.c_str(), F_OK) == 0);  // an exec'd image of this pid dumped there
  const uint64_t window_ns = config_.flight_window_ms * 1'000'000ull;
  const uint64_t cutoff = now_ns > window_ns ? now_ns - window_ns : 0;
  const StatRecord overrides[] = {
      {pid_, static_cast<uint32_t>(StatId::flight_dumps), dumps_},
      {pid_, static_cast<uint32_t>(StatId::flight_evicted_records), ring.EvictedSince(cutoff)},
      {pid_, static_cast<uint32_t>(StatId::flight_memory_peak_bytes), ring.peak_bytes()}};
  auto dumped = ring.Dump(path, now_ns, overrides);
  const double took_ms = (MonotonicNs() - now_ns) / 1e6;
  if (why & kFlightCudaError) {
    last_error_dump_ns_.store(now_ns, std::memory_order_relaxed);
    error_dumps_.fetch_add(1, std::memory_order_relaxed);
  }
  const uint64_t error = error_.exchange(0);
  if (!dumped.ok()) {
    LogOnce("flight recorder: cannot write its dump: %s", dumped.status().message().c_str());
    return;
  }
  WriteState(path);
  if (why & kFlightCudaError) {
    LogOnce("a CUDA call returned error %d: the flight recorder wrote the last %.3g s to %s",
            static_cast<int32_t>(error & 0xffffffffu), window_ns / 1e9, path.c_str());
  } else if (why & kFlightExit) {
    LogVerbose("flight recorder: wrote the last %.3g s to %s at exit (%llu records, %.0f ms)",
               window_ns / 1e9, path.c_str(),
               static_cast<unsigned long long>(dumped->records_written), took_ms);
  } else {
    LogOnce("flight recorder: wrote the last %.3g s to %s (%s; later dumps are numbered on)",
            window_ns / 1e9, path.c_str(), TriggerName(why));
  }
}

void FlightRecorder::Finish() {
  unlink(state_path_.c_str());
  unlink(request_path_.c_str());
}

void FlightRecorder::WriteState(const std::string& last_path) {
  char text[4352];
  const int n = std::snprintf(
      text, sizeof(text), "pid=%u\nsignal=%d\nwindow_ms=%llu\ndumps=%u\nlast=%s\n", pid_,
      config_.flight_signal, static_cast<unsigned long long>(config_.flight_window_ms), dumps_,
      last_path.c_str());
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(text)) return;
  const std::string part = state_path_ + ".part";
  const int fd = open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const bool written = write(fd, text, static_cast<size_t>(n)) == n;
  close(fd);
  if (!written || rename(part.c_str(), state_path_.c_str()) != 0) unlink(part.c_str());
}

bool InstallFlightSignal(int signal, void (*on_signal)()) {
  if (IsRefusedFlightSignal(signal)) {
    LogOnce("flight recorder: signal %d cannot ask for dumps; use gpuperf dump-now", signal);
    return false;
  }
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  sigaction(signal, nullptr, &g_previous_action);
  g_on_flight_signal = on_signal;
  action.sa_sigaction = OnFlightSignal;
  // The program's handler keeps its own way with interrupted calls; with none, restart them.
  const bool had_handler =
      (g_previous_action.sa_flags & SA_SIGINFO) ||
      (g_previous_action.sa_handler != SIG_DFL && g_previous_action.sa_handler != SIG_IGN);
  action.sa_flags =
      SA_SIGINFO | (had_handler ? (g_previous_action.sa_flags & SA_RESTART) : SA_RESTART);
  sigemptyset(&action.sa_mask);
  return sigaction(signal, &action, nullptr) == 0;
}

}  // namespace gpuperf::inject
