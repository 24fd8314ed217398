#include "analyze/ranks/collectives.h"

#include <algorithm>
#include <tuple>

#include "base/demangle.h"

namespace gpuperf {
namespace {

constexpr std::string_view kPrefixes[] = {"ncclDevKernel_", "ncclKernel_"};

bool IdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

std::string CommKernelName(std::string_view recorded_name) {
  bool nccl = false;
  for (std::string_view prefix : kPrefixes) nccl |= recorded_name.find(prefix) != std::string::npos;
  if (!nccl) return {};
  // Mangled names carry a length prefix and argument types: read the demangled form, or,
  // when it does not demangle, the identifier its length prefix spans.
  const std::string demangled = Demangle(recorded_name);
  const bool plain = demangled == recorded_name;
  for (std::string_view prefix : kPrefixes) {
    const size_t at = demangled.find(prefix);
    if (at == std::string::npos) continue;
    size_t digits = at;
    while (plain && digits > 0 && demangled[digits - 1] >= '0' && demangled[digits - 1] <= '9') {
      --digits;
    }
    if (digits < at && digits >= 2 && demangled.compare(digits - 2, 2, "_Z") == 0) {
      const size_t length = std::stoul(demangled.substr(digits, at - digits));
      if (at + length <= demangled.size()) return demangled.substr(at, length);
    }
    size_t end = at + prefix.size();
    while (end < demangled.size() && IdentifierChar(demangled[end])) ++end;
    return demangled.substr(at, end - at);
  }
  return {};
}

std::string CollectiveKind(std::string_view name) {
  for (std::string_view prefix : kPrefixes) {
    if (name.starts_with(prefix)) {
      name.remove_prefix(prefix.size());
      return std::string(name.substr(0, name.find('_')));
    }
  }
  return std::string(name);
}

MatchedCollectives MatchCollectives(std::map<uint32_t, std::vector<CommKernel>> kernels_by_pid) {
  // Per process: (stream ordinal, name) -> its kernels in start order.
  using Sequence = std::pair<uint32_t, uint32_t>;
  std::map<Sequence, std::map<uint32_t, std::vector<const CommKernel*>>> sequences;
  for (auto& [pid, kernels] : kernels_by_pid) {
    std::sort(kernels.begin(), kernels.end(), [](const CommKernel& a, const CommKernel& b) {
      return std::tie(a.start_ns, a.end_ns) < std::tie(b.start_ns, b.end_ns);
    });
    std::vector<std::pair<uint32_t, uint32_t>> stream_order;  // (device, stream) by first use
    for (const CommKernel& k : kernels) {
      const auto stream = std::make_pair(k.device, k.stream);
      auto it = std::find(stream_order.begin(), stream_order.end(), stream);
      const auto ordinal = static_cast<uint32_t>(it - stream_order.begin());
      if (it == stream_order.end()) stream_order.push_back(stream);
      sequences[{ordinal, k.name}][pid].push_back(&k);
    }
  }
  MatchedCollectives out;
  for (const auto& [sequence, by_pid] : sequences) {
    size_t common = SIZE_MAX;
    size_t total = 0;
    for (const auto& [pid, kernels] : by_pid) {
      common = std::min(common, kernels.size());
      total += kernels.size();
    }
    // A sequence only some processes ran (another communicator's) matches for them alone.
    out.unmatched += total - common * by_pid.size();
    for (size_t n = 0; n < common; ++n) {
      CollectiveInstance instance;
      instance.stream_ordinal = sequence.first;
      instance.name = sequence.second;
      instance.ordinal = static_cast<uint32_t>(n);
      for (const auto& [pid, kernels] : by_pid) {
        instance.arrivals.push_back({pid, kernels[n]->start_ns, kernels[n]->end_ns});
      }
      out.instances.push_back(std::move(instance));
    }
  }
  return out;
}

}  // namespace gpuperf
