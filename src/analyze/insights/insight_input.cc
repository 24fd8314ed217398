#include "analyze/insights/insight_input.h"

#include <algorithm>

#include "base/demangle.h"

namespace gpuperf::insights {

InsightInput::InsightInput(report::ReportContext& context, const ReportModel& model,
                           std::vector<ProcessWork> processes, const Correlator& links)
    : context_(context), model_(model), processes_(std::move(processes)), links_(links) {
  // Every API call by (pid, correlation id), for the rules' launch-cost lookups.
  for (const auto& [pid, process] : context.processes()) {
    for (size_t t = 0; t < process.threads.size(); ++t) {
      const auto& calls = process.threads[t]->calls;
      for (size_t i = 0; i < calls.size(); ++i) {
        if (calls[i].correlation_id == 0) continue;
        CallRef& ref = calls_.At(pid, calls[i].correlation_id);
        if (ref.thread == 0) {
          ref = {static_cast<uint32_t>(t + 1), static_cast<uint32_t>(i)};
        }
      }
    }
  }
}

const LaunchLink* InsightInput::Link(uint32_t pid, uint32_t correlation_id) const {
  if (correlation_id == 0) return nullptr;
  return links_.FindLink(pid, correlation_id);
}

uint32_t InsightInput::Place(StackId stack, uint32_t tid) {
  if (stack == 0) return 0;
  auto [it, inserted] = place_of_.try_emplace({stack, tid}, 0);
  if (!inserted) return it->second;
  std::vector<std::string> lines = Stack(stack, tid);
  if (lines.empty()) return 0;
  auto [place, added] = place_index_.try_emplace(lines, static_cast<uint32_t>(places_.size()));
  if (added) places_.push_back(std::move(lines));
  return it->second = place->second;
}

std::vector<std::string> InsightInput::Stack(StackId stack, uint32_t tid) {
  constexpr size_t kShown = 8;         // lines of a stack
  constexpr size_t kBeforePython = 2;  // native lines kept before the Python frames
  std::vector<Frame> frames;
  context_.ResolveStack(stack, tid, frames);  // outermost first
  std::vector<std::string> lines;
  size_t first_python = SIZE_MAX;  // index in `lines`
  for (size_t i = frames.size(); i-- > 0;) {
    const Frame& f = frames[i];
    const bool unresolved = f.kind == FrameKind::kNative && f.file.empty() &&
                            f.function.find("+0x") != std::string_view::npos;
    if (unresolved) {
      // "libcublasLt.so.13+0x71ba5cd" and its neighbours in the same library: one line.
      size_t run = 1;
      while (i > 0 && frames[i - 1].kind == FrameKind::kNative && frames[i - 1].file.empty() &&
             frames[i - 1].module == f.module &&
             frames[i - 1].function.find("+0x") != std::string_view::npos) {
        --i;
        ++run;
      }
      lines.push_back(run == 1 ? std::string(f.function)
                               : std::string(f.module) + " (" + std::to_string(run) +
                                     " frames without symbols)");
      continue;
    }
    Frame shown = f;
    std::string name = f.kind == FrameKind::kNative ? ShortName(f.function) : std::string();
    if (!name.empty()) shown.function = name;
    if (f.kind == FrameKind::kPython && first_python == SIZE_MAX) first_python = lines.size();
    lines.push_back(FrameWithLocation(shown));
  }
  if (first_python != SIZE_MAX && first_python >= kShown - 2) {
    // Skip the library frames between the launch and the user's Python code.
    std::vector<std::string> out(lines.begin(), lines.begin() + kBeforePython);
    out.push_back("... " + std::to_string(first_python - kBeforePython) + " frames ...");
    for (size_t i = first_python; i < lines.size() && out.size() < kShown + 1; ++i) {
      out.push_back(lines[i]);
    }
    return out;
  }
  if (lines.size() > kShown) lines.resize(kShown);
  return lines;
}

std::span<const std::unique_ptr<report::ThreadCalls>> InsightInput::Threads(uint32_t pid) const {
  const report::ProcessInfo* process = context_.processes().Find(pid);
  if (process == nullptr) return {};
  return process->threads;
}

const report::ApiCall* InsightInput::Resolve(uint32_t pid, const CallRef& ref) const {
  if (ref.thread == 0) return nullptr;
  const auto threads = Threads(pid);
  if (ref.thread > threads.size()) return nullptr;
  const auto& calls = threads[ref.thread - 1]->calls;
  return ref.index < calls.size() ? &calls[ref.index] : nullptr;
}

const report::ApiCall* InsightInput::ApiCall(uint32_t pid, uint32_t correlation_id) const {
  if (correlation_id == 0) return nullptr;
  if (const CallRef* ref = calls_.Find(pid, correlation_id); ref != nullptr && ref->thread != 0) {
    return Resolve(pid, *ref);
  }
  // A nested call's id: the outermost call on the link's thread, entered at the link's time.
  const LaunchLink* link = Link(pid, correlation_id);
  if (link == nullptr) return nullptr;
  for (const auto& thread : Threads(pid)) {
    if (thread->tid != link->tid) continue;
    const auto& calls = thread->calls;
    auto it = std::lower_bound(calls.begin(), calls.end(), link->launch_ns,
                               [](const report::ApiCall& c, uint64_t t) { return c.start < t; });
    if (it != calls.end() && it->start == link->launch_ns) return &*it;
  }
  return nullptr;
}

std::vector<Gap> InsightInput::Gaps(const DeviceWork& device, uint64_t min_ns) {
  std::vector<Gap> gaps;
  uint64_t busy_until = 0;
  for (size_t i = 0; i < device.work.size(); ++i) {
    const GpuWork& w = device.work[i];
    if (i > 0 && w.start > busy_until && w.start - busy_until >= min_ns) {
      gaps.push_back({busy_until, w.start, i});
    }
    busy_until = std::max(busy_until, w.end);
  }
  return gaps;
}

}  // namespace gpuperf::insights
