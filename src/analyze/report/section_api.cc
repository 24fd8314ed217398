// CUDA runtime and driver API calls: time statistics, failures and error codes per
// function; the summary's API totals.
#include <algorithm>

#include "analyze/report/report_builder.h"
#include "base/cuda_errors.h"

namespace gpuperf::report {
namespace {

struct ApiAgg {
  StringId name = 0;
  ApiDomain domain = ApiDomain::kUnknown;
  DurationStats time;
  uint64_t failures = 0;
  std::vector<std::pair<int32_t, uint64_t>> errors;  // code -> calls
};

void CountError(ApiAgg& agg, int32_t code) {
  if (IsCudaFailure(code)) ++agg.failures;
  for (auto& [c, n] : agg.errors) {
    if (c == code) {
      ++n;
      return;
    }
  }
  agg.errors.push_back({code, 1});
}

class ApiSection final : public ReportSection {
 public:
  explicit ApiSection(ReportContext& context) : context_(context) {}

  void OnApiCalls(std::span<const ApiRecord> records) override {
    for (const ApiRecord& a : records) {
      if (!context_.ApiSelected(a.name)) continue;
      const uint64_t ns = Duration(a.start_ns, a.end_ns);
      ApiAgg& agg = apis_by_name_[a.name];
      if (agg.time.count == 0) agg.domain = a.domain;  // a row has its first call's domain
      AddDuration(agg.time, ns);
      ++calls_;
      ns_ += ns;
      if (a.return_code != 0) CountError(agg, a.return_code);
    }
  }

  void Finish(ReportModel& model) override {
    model.summary.api_calls = calls_;
    model.summary.api_ns = ns_;
    for (ApiAgg& agg : apis_by_name_.rows()) {
      ApiRow row;
      row.name = context_.Str(agg.name);
      row.domain = agg.domain;
      row.time = agg.time;
      row.failures = agg.failures;
      model.summary.api_failures += agg.failures;
      for (auto [code, count] : agg.errors) {
        row.errors.push_back({code, CudaErrorName(agg.domain, code), count});
      }
      std::stable_sort(row.errors.begin(), row.errors.end(),
                       [](const ApiError& a, const ApiError& b) {
                         return a.count != b.count ? a.count > b.count : a.code < b.code;
                       });
      (agg.domain == ApiDomain::kRuntime ? model.runtime_api : model.driver_api)
          .push_back(std::move(row));
    }
  }

 private:
  ReportContext& context_;
  RowsByName<ApiAgg> apis_by_name_;
  uint64_t calls_ = 0;
  uint64_t ns_ = 0;
};

}  // namespace

std::unique_ptr<ReportSection> MakeApiSection(ReportContext& context) {
  return std::make_unique<ApiSection>(context);
}

}  // namespace gpuperf::report
