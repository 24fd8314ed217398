#include "analyze/ranks/rank_partial.h"

#include <algorithm>

namespace gpuperf {

void MergeRankPartial(RankPartial& into, RankPartial more) {
  for (const RankPartial::Device& d : more.devices) {
    auto it = std::find_if(into.devices.begin(), into.devices.end(),
                           [&d](const RankPartial::Device& e) { return e.device == d.device; });
    if (it == into.devices.end()) {
      into.devices.push_back(d);
      continue;
    }
    it->kernels += d.kernels;
    it->compute_ns += d.compute_ns;
    it->comm_ns += d.comm_ns;
    it->overlap_ns += d.overlap_ns;
  }
  std::sort(into.devices.begin(), into.devices.end(),
            [](const RankPartial::Device& a, const RankPartial::Device& b) {
              return a.device < b.device;
            });
  std::vector<uint32_t> name_of(more.comm_names.size(), 0);
  for (size_t i = 1; i < more.comm_names.size(); ++i) {
    auto it = std::find(into.comm_names.begin(), into.comm_names.end(), more.comm_names[i]);
    name_of[i] = static_cast<uint32_t>(it - into.comm_names.begin());
    if (it == into.comm_names.end()) into.comm_names.push_back(more.comm_names[i]);
  }
  const int64_t first_kernel = static_cast<int64_t>(into.comm.size());
  for (CommKernel k : more.comm) {
    k.name = name_of[k.name];
    into.comm.push_back(k);
  }
  for (JoinedNcclCall c : more.calls) {
    if (c.kernel >= 0) c.kernel += first_kernel;
    into.calls.push_back(std::move(c));
  }
  into.kernels_unjoined += more.kernels_unjoined;
}

}  // namespace gpuperf
