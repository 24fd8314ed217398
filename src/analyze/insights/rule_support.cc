#include "analyze/insights/rule_support.h"

#include "base/demangle.h"

namespace gpuperf::insights {

std::string Plural(uint64_t n, std::string_view one, std::string_view many) {
  std::string text = std::to_string(n) + " ";
  if (n == 1) return text + std::string(one);
  return text + (many.empty() ? std::string(one) + "s" : std::string(many));
}

uint64_t Median(std::vector<uint64_t>& values) {
  if (values.empty()) return 0;
  const size_t middle = (values.size() - 1) / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  return values[middle];
}

uint64_t ActiveSpan(const DeviceWork& device) {
  if (device.work.empty()) return 0;
  uint64_t last = 0;
  for (const GpuWork& w : device.work) last = std::max(last, w.end);
  return last > device.work.front().start ? last - device.work.front().start : 0;
}

const LaunchLink* LinkOfWork(const InsightInput& input, uint32_t pid, const GpuWork& work) {
  if (const LaunchLink* link = input.Link(pid, work.correlation_id)) return link;
  return input.Link(pid, work.runtime_correlation_id);
}

uint32_t PlaceOfWork(InsightInput& input, uint32_t pid, const GpuWork& work) {
  return input.PlaceOf(LinkOfWork(input, pid, work));
}

std::string FromWhere(const std::vector<std::string>& stack) {
  for (const std::string& frame : stack) {
    if (frame.find(".py:") != std::string::npos) return " from " + frame;
  }
  return stack.empty() ? std::string() : " from " + stack.front();
}

std::string KernelName(const InsightInput& input, StringId name) {
  const std::string& mangled = input.Str(name);
  return mangled.empty() ? std::string("[unnamed kernel]") : ShortName(Demangle(mangled));
}

bool IsSynchronizeCall(std::string_view api) {
  return api.find("Synchronize") != std::string_view::npos;
}

std::vector<SyncCall> SynchronizeCalls(const InsightInput& input, uint32_t pid) {
  std::vector<SyncCall> syncs;
  for (const auto& thread : input.Threads(pid)) {
    for (const report::ApiCall& call : thread->calls) {
      if (IsSynchronizeCall(input.Str(call.name))) syncs.push_back({&call, thread->tid});
    }
  }
  std::sort(syncs.begin(), syncs.end(),
            [](const SyncCall& a, const SyncCall& b) { return a.call->end < b.call->end; });
  return syncs;
}

const SyncCall* SyncThatDrained(const std::vector<SyncCall>& syncs, const Gap& gap) {
  auto it = std::lower_bound(syncs.begin(), syncs.end(), gap.begin,
                             [](const SyncCall& s, uint64_t t) { return s.call->end < t; });
  for (; it != syncs.end() && it->call->end < gap.end; ++it) {
    if (it->call->start <= gap.begin) return &*it;
  }
  return nullptr;
}

std::string_view CopyDirection(MemcpyKind kind) {
  switch (kind) {
    case MemcpyKind::kHtoD:
      return "host-to-device";
    case MemcpyKind::kDtoH:
      return "device-to-host";
    case MemcpyKind::kDtoD:
      return "device-to-device";
    case MemcpyKind::kHtoH:
      return "host-to-host";
    case MemcpyKind::kPtoP:
      return "peer-to-peer";
    default:
      return "array";
  }
}

}  // namespace gpuperf::insights
