#include "analyze/timeline/timeline_window.h"

#include <algorithm>
#include <cctype>
#include <tuple>

#include "base/units.h"

namespace gpuperf {
namespace {

bool IsAlpha(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}
bool IsDigit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
bool IsUpper(char c) {
  return std::isupper(static_cast<unsigned char>(c)) != 0;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

StepName ParseStepName(std::string_view name) {
  // A number at the end, and the separators before it: "#12", " 3", "_7".
  size_t end = name.size();
  while (end > 0 && IsDigit(name[end - 1])) --end;
  std::optional<int64_t> number;
  if (end < name.size() && name.size() - end <= 18) {
    number = std::stoll(std::string(name.substr(end)));
  }
  size_t word_end = end;
  while (word_end > 0 &&
         std::string_view(" #_-:=").find(name[word_end - 1]) != std::string_view::npos) {
    --word_end;
  }
  // The last word: letters back to a non-letter, or to the capital that begins it in
  // camel case ("ProfilerStep").
  size_t word_begin = word_end;
  while (word_begin > 0 && IsAlpha(name[word_begin - 1])) {
    --word_begin;
    if (IsUpper(name[word_begin]) && word_begin > 0 && IsAlpha(name[word_begin - 1]) &&
        !IsUpper(name[word_begin - 1])) {
      break;
    }
  }
  const std::string_view word = name.substr(word_begin, word_end - word_begin);
  StepName step;
  step.is_step = EqualsIgnoringCase(word, "step") || EqualsIgnoringCase(word, "iteration");
  if (step.is_step) step.number = number;
  return step;
}

std::string DescribeWindow(const TimelineWindow& window, const TimelineEventCounts& left_out) {
  auto count = [](uint64_t n, const char* one, const char* many) {
    return FormatCount(n) + " " + (n == 1 ? one : many);
  };
  std::string times =
      FormatDuration(window.begin_ns - window.origin_ns) + " to " +
      (window.end_ns == TimelineWindow::kEnd
           ? "the end"
           : FormatDuration(window.end_ns - window.origin_ns) + " after the trace's start");
  return (window.what.empty() ? times : window.what + " (" + times + ")") + ": left out " +
         count(left_out.kernels, "kernel", "kernels") + ", " +
         count(left_out.copies, "copy", "copies") + ", " + count(left_out.sets, "set", "sets") +
         ", " + count(left_out.api_calls, "API call", "API calls") + ", " +
         count(left_out.nvtx, "NVTX range or mark", "NVTX ranges and marks");
}

WindowScan::WindowScan(const TimelineWindowRequest& request) : request_(request) {}

std::span<const uint16_t> WindowScan::ChunkTypes() {
  // Processes, kernels, copies, sets, API calls, syncs, NVTX (records.h numbers).
  static constexpr uint16_t kTypes[] = {1, 5, 6, 7, 8, 9, 11};
  return kTypes;
}

void WindowScan::OnString(StringId id, std::string_view text) {
  if (strings_.size() <= id) strings_.resize(id + 1);
  strings_[id] = std::string(text);
}

void WindowScan::OnProcess(std::span<const ProcessRecord> records) {
  origin_.AddProcesses(records);
}
void WindowScan::OnApi(std::span<const ApiRecord> records) {
  origin_.AddStarts(records);
}
void WindowScan::OnMemcpy(std::span<const MemcpyRecord> records) {
  origin_.AddStarts(records);
}
void WindowScan::OnMemset(std::span<const MemsetRecord> records) {
  origin_.AddStarts(records);
}
void WindowScan::OnSync(std::span<const SyncRecord> records) {
  origin_.AddStarts(records);
}

void WindowScan::OnKernel(std::span<const KernelRecord> records) {
  origin_.AddStarts(records);
  if (!request_.max_kernels) return;
  for (const KernelRecord& kernel : records) kernel_starts_.push_back(kernel.start_ns);
  // Counted from the trace's start, only the earliest cap + 1 kernels can matter: keep
  // those alone, so memory follows the cap, not the trace. A window that starts later
  // (--from, --steps) is only known at the end: then every start is kept.
  const size_t keep = request_.max_kernels + 1;
  if (!request_.from_ns && !request_.steps && kernel_starts_.size() >= 2 * keep) {
    std::nth_element(kernel_starts_.begin(), kernel_starts_.begin() + (keep - 1),
                     kernel_starts_.end());
    kernel_starts_.resize(keep);
  }
}

void WindowScan::OnNvtx(std::span<const NvtxRecord> records) {
  origin_.AddStarts(records);
  if (!request_.steps) return;
  for (const NvtxRecord& nvtx : records) {
    if (nvtx.kind != NvtxKind::kRange || nvtx.end_ns < nvtx.start_ns || nvtx.end_ns == 0) {
      continue;
    }
    const StepName step = ParseStepName(nvtx.name < strings_.size() ? strings_[nvtx.name] : "");
    if (step.is_step) {
      steps_.push_back({nvtx.start_ns, nvtx.end_ns, nvtx.pid, nvtx.tid, step.number});
    }
  }
}

Result<std::pair<uint64_t, uint64_t>> WindowScan::TimeWindow(std::string& what) {
  const uint64_t origin = origin_.ns() == TraceOrigin::kNone ? 0 : origin_.ns();
  uint64_t begin = origin + request_.from_ns.value_or(0);
  uint64_t end = request_.to_ns ? origin + *request_.to_ns : TimelineWindow::kEnd;
  if (!request_.steps) return std::make_pair(begin, end);
  if (steps_.empty()) {
    return Error(StatusCode::kInvalidArgument,
                 "--steps: the trace has no NVTX range named like a step (ProfilerStep#N, "
                 "step N, train_step, ...)");
  }
  // Unnumbered steps count 1, 2, 3... in time order on each thread.
  std::sort(steps_.begin(), steps_.end(), [](const Step& a, const Step& b) {
    return std::tie(a.pid, a.tid, a.start_ns) < std::tie(b.pid, b.tid, b.start_ns);
  });
  std::map<std::pair<uint32_t, uint32_t>, int64_t> counted;
  for (Step& step : steps_) {
    if (!step.number) step.number = ++counted[{step.pid, step.tid}];
  }
  const auto [first, last] = *request_.steps;
  uint64_t steps_begin = TimelineWindow::kEnd, steps_end = 0;
  for (const Step& step : steps_) {
    if (*step.number < first || *step.number > last) continue;
    steps_begin = std::min(steps_begin, step.start_ns);
    steps_end = std::max(steps_end, step.end_ns);
  }
  if (steps_begin == TimelineWindow::kEnd) {
    return Error(StatusCode::kInvalidArgument,
                 "--steps: the trace has no step numbered " +
                     (first == last ? std::to_string(first)
                                    : std::to_string(first) + " to " + std::to_string(last)) +
                     " (its steps: " + StepNumbers() + ")");
  }
  what = first == last ? "step " + std::to_string(first)
                       : "steps " + std::to_string(first) + " to " + std::to_string(last);
  return std::make_pair(std::max(begin, steps_begin), std::min(end, steps_end));
}

std::string WindowScan::StepNumbers() const {
  int64_t low = std::numeric_limits<int64_t>::max(), high = std::numeric_limits<int64_t>::min();
  for (const Step& step : steps_) {
    low = std::min(low, *step.number);
    high = std::max(high, *step.number);
  }
  return low == high ? std::to_string(low) : std::to_string(low) + " to " + std::to_string(high);
}

uint64_t WindowScan::CapEnd(uint64_t begin, uint64_t end) {
  std::vector<uint64_t> inside;
  for (uint64_t start : kernel_starts_) {
    if (start >= begin && start < end) inside.push_back(start);
  }
  if (inside.size() <= request_.max_kernels) return end;
  std::nth_element(inside.begin(), inside.begin() + static_cast<ptrdiff_t>(request_.max_kernels),
                   inside.end());
  // Kernels that start together with the first one left out are left out too.
  return inside[request_.max_kernels];
}

Result<TimelineWindow> WindowScan::Resolve() {
  TimelineWindow window;
  window.active = request_.any();
  window.origin_ns = origin_.ns() == TraceOrigin::kNone ? 0 : origin_.ns();
  GP_ASSIGN_OR_RETURN(auto range, TimeWindow(window.what));
  window.begin_ns = range.first;
  window.end_ns = range.second;
  if (request_.max_kernels) {
    window.end_ns = CapEnd(window.begin_ns, window.end_ns);
    window.what = (window.what.empty() ? "" : window.what + ", ") + "the first " +
                  FormatCount(request_.max_kernels) + " kernels";
  }
  if (window.end_ns <= window.begin_ns) {
    return Error(StatusCode::kInvalidArgument, "the window " + window.what + " is empty");
  }
  return window;
}

}  // namespace gpuperf
