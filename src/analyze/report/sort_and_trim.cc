// Table order and length of a finished report (`report --sort`, `--top`).
#include <algorithm>

#include "analyze/report/report_model.h"

namespace gpuperf {
namespace {

template <class Row, class Key>
void SortRows(std::vector<Row>& rows, ReportSort sort, Key name_of) {
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    const DurationStats& x = a.time;
    const DurationStats& y = b.time;
    switch (sort) {
      case ReportSort::kCalls:
        if (x.count != y.count) return x.count > y.count;
        break;
      case ReportSort::kAvg:
        if (x.avg_ns() != y.avg_ns()) return x.avg_ns() > y.avg_ns();
        break;
      case ReportSort::kMedian:
        if (x.median_ns != y.median_ns) return x.median_ns > y.median_ns;
        break;
      case ReportSort::kMax:
        if (x.max_ns != y.max_ns) return x.max_ns > y.max_ns;
        break;
      case ReportSort::kName:
        return name_of(a) < name_of(b);
      case ReportSort::kTotal:
        break;
    }
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    return name_of(a) < name_of(b);
  });
}

template <class Row>
void Trim(std::vector<Row>& rows, uint32_t top) {
  if (top > 0 && rows.size() > top) rows.resize(top);
}

}  // namespace

void SortAndTrim(ReportModel& model, ReportSort sort, uint32_t top) {
  SortRows(model.kernels, sort, [](const KernelRow& r) -> const std::string& { return r.name; });
  SortRows(model.runtime_api, sort, [](const ApiRow& r) -> const std::string& { return r.name; });
  SortRows(model.driver_api, sort, [](const ApiRow& r) -> const std::string& { return r.name; });
  SortRows(model.nvtx, sort, [](const NvtxRow& r) -> const std::string& { return r.name; });
  Trim(model.kernels, top);
  Trim(model.runtime_api, top);
  Trim(model.driver_api, top);
  Trim(model.nvtx, top);
  Trim(model.sync, top);
  Trim(model.leaks, top);
  for (UtilizationRow& u : model.utilization) Trim(u.longest_gaps, top);
  Trim(model.cpu.functions, top);
  Trim(model.cpu.blocked, top);
  Trim(model.energy.kernels, top);  // already in order of joules
}

}  // namespace gpuperf
