// The host half of CUPTI's range profiler (cupti_profiler_host.h): a metric set turned into a
// config image for one chip, and decoded counter data turned back into metric values. Runs on
// the CPU only; one per chip, shared by the contexts of that chip's devices.
#pragma once

#include <cupti_profiler_host.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuperf::inject {

class MetricHost {
 public:
  MetricHost() = default;
  MetricHost(const MetricHost&) = delete;
  MetricHost& operator=(const MetricHost&) = delete;
  ~MetricHost();

  // Builds the config image of `metrics` for `chip`, given the device's counter availability
  // image. Returns CUPTI's result; `failed_call` names the call that failed.
  CUptiResult Create(const std::string& chip, const std::vector<uint8_t>& availability,
                     const std::vector<std::string_view>& metrics, const char** failed_call);

  const std::string& chip() const { return chip_; }
  const std::vector<uint8_t>& config() const { return config_; }
  size_t passes() const { return passes_; }
  const std::vector<const char*>& metric_names() const { return names_; }

  // The values of every metric for range `index` of decoded counter data, in metric order.
  CUptiResult Evaluate(const std::vector<uint8_t>& counter_data, size_t index,
                       std::vector<double>& values) const;

 private:
  std::string chip_;
  CUpti_Profiler_Host_Object* object_ = nullptr;
  std::vector<std::string> owned_names_;
  std::vector<const char*> names_;
  std::vector<uint8_t> config_;
  size_t passes_ = 0;
};

}  // namespace gpuperf::inject
