#include "analyze/hardware/hardware_model.h"

#include "base/metric_sets.h"

namespace gpuperf {

std::optional<double> HardwareRow::Get(std::string_view name) const {
  const KnownMetric* known = FindKnownMetric(name);
  const std::string_view cupti = known ? known->cupti_name : name;
  for (const MetricValue& m : metrics) {
    if (m.metric == cupti) return m.value;
  }
  return std::nullopt;
}

}  // namespace gpuperf
