#include "analyze/energy/energy.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace gpuperf {
namespace {

constexpr double kJoulesPerMilliwattNs = 1e-12;  // 1 mW for 1 ns

// The readings' integral from the first reading up to `t` (mW ns), piecewise linear.
class PowerIntegral {
 public:
  explicit PowerIntegral(std::vector<std::pair<uint64_t, uint32_t>> readings)
      : readings_(std::move(readings)) {
    cumulative_.assign(readings_.size(), 0);
    for (size_t i = 1; i < readings_.size(); ++i) {
      cumulative_[i] = cumulative_[i - 1] + Mean(i - 1) * static_cast<double>(Width(i - 1));
    }
  }
  uint64_t first() const { return readings_.front().first; }
  uint64_t last() const { return readings_.back().first; }
  double total() const { return cumulative_.back(); }

  double At(uint64_t t) const {
    if (t <= first()) return 0;
    if (t >= last()) return total();
    auto it = std::upper_bound(readings_.begin(), readings_.end(), t,
                               [](uint64_t value, const auto& r) { return value < r.first; });
    const size_t i = static_cast<size_t>(it - readings_.begin()) - 1;
    return cumulative_[i] + Mean(i) * static_cast<double>(t - readings_[i].first);
  }

 private:
  // The mean power of interval i (readings i and i + 1): the trapezoid rule.
  double Mean(size_t i) const {
    return (static_cast<double>(readings_[i].second) + readings_[i + 1].second) / 2;
  }
  uint64_t Width(size_t i) const { return readings_[i + 1].first - readings_[i].first; }

  std::vector<std::pair<uint64_t, uint32_t>> readings_;  // (time, mW), sorted
  std::vector<double> cumulative_;
};

struct Series {
  std::vector<std::pair<uint64_t, uint32_t>> power;
  std::vector<std::pair<uint64_t, uint64_t>> energy;  // counter readings (time, mJ)
  PowerSource source = PowerSource::kNone;
};

void Attribute(const Series& series, std::span<const EnergySpan> spans, EnergyDevice& device,
               std::vector<double>& joules) {
  const PowerIntegral integral(series.power);
  device.samples = series.power.size();
  device.first_ns = integral.first();
  device.last_ns = integral.last();
  device.source = series.source;
  device.sampled_j = integral.total() * kJoulesPerMilliwattNs;
  std::vector<uint64_t> gaps;
  for (size_t i = 1; i < series.power.size(); ++i) {
    gaps.push_back(series.power[i].first - series.power[i - 1].first);
  }
  if (!gaps.empty()) {
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    const uint64_t median = gaps[gaps.size() / 2];
    device.rate_hz = median ? 1e9 / static_cast<double>(median) : 0;
  }
  if (series.energy.size() >= 2) {
    const auto& [t0, e0] = series.energy.front();
    const auto& [t1, e1] = series.energy.back();
    device.counter_j = static_cast<double>(e1 - e0) / 1000.0;
    device.sampled_over_counter_j = (integral.At(t1) - integral.At(t0)) * kJoulesPerMilliwattNs;
  }
  // Sweep over kernel starts and ends. Between two events the running count k is fixed;
  // per_kernel accumulates the energy each running kernel has earned so far.
  struct Event {
    uint64_t t;
    bool start;
    size_t span;
  };
  std::vector<Event> events;
  events.reserve(spans.size() * 2);
  for (size_t i = 0; i < spans.size(); ++i) {
    const EnergySpan& s = spans[i];
    const uint64_t end = std::max(s.end_ns, s.start_ns);
    device.kernel_ns += end - s.start_ns;
    const uint64_t inside_begin = std::clamp(s.start_ns, device.first_ns, device.last_ns);
    const uint64_t inside_end = std::clamp(end, device.first_ns, device.last_ns);
    device.unsampled_kernel_ns += (end - s.start_ns) - (inside_end - inside_begin);
    events.push_back({s.start_ns, true, i});
    events.push_back({end, false, i});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.t, a.start) < std::tie(b.t, b.start);  // ends first at a tie
  });
  std::vector<double> earned_at_start(spans.size(), 0);
  double per_kernel = 0;  // mW ns
  double idle = 0;
  uint64_t running = 0;
  uint64_t previous = device.first_ns;
  double previous_integral = 0;
  for (const Event& e : events) {
    const double now_integral = integral.At(e.t);
    if (e.t > previous) {
      const double energy = now_integral - previous_integral;
      if (running > 0) {
        per_kernel += energy / static_cast<double>(running);
      } else {
        idle += energy;
      }
    }
    previous = std::max(previous, e.t);
    previous_integral = std::max(previous_integral, now_integral);
    if (e.start) {
      earned_at_start[e.span] = per_kernel;
      ++running;
    } else {
      --running;
      const double earned = (per_kernel - earned_at_start[e.span]) * kJoulesPerMilliwattNs;
      joules[spans[e.span].tag] += earned;
      device.attributed_j += earned;
    }
  }
  idle += integral.total() - previous_integral;  // after the last kernel ended
  device.idle_j = idle * kJoulesPerMilliwattNs;
}

}  // namespace

double EnergyAttribution::attributed_j() const {
  double total = 0;
  for (const EnergyDevice& d : devices) total += d.attributed_j;
  return total;
}

EnergyAttribution AttributeEnergy(std::span<const PowerSampleRecord> samples,
                                  std::vector<EnergySpan> spans, size_t tags) {
  EnergyAttribution out;
  out.joules_by_tag.assign(tags, 0);
  std::map<std::pair<uint32_t, uint32_t>, Series> series;
  for (const PowerSampleRecord& s : samples) {
    Series& one = series[{s.pid, s.device_id}];
    if (s.source != PowerSource::kNone) {
      one.power.emplace_back(s.timestamp_ns, s.power_mw);
      if (one.source == PowerSource::kNone || s.source == PowerSource::kAveraged) {
        one.source = s.source;  // averaged anywhere in the series says so
      }
    }
    if (s.energy_mj != 0) one.energy.emplace_back(s.timestamp_ns, s.energy_mj);
  }
  std::sort(spans.begin(), spans.end(), [](const EnergySpan& a, const EnergySpan& b) {
    return std::tie(a.pid, a.device) < std::tie(b.pid, b.device);
  });
  size_t begin = 0;
  for (auto& [key, one] : series) {
    std::sort(one.power.begin(), one.power.end());
    std::sort(one.energy.begin(), one.energy.end());
    while (begin < spans.size() &&
           std::tie(spans[begin].pid, spans[begin].device) < std::tie(key.first, key.second)) {
      ++begin;
    }
    size_t end = begin;
    while (end < spans.size() && spans[end].pid == key.first && spans[end].device == key.second) {
      ++end;
    }
    if (one.power.size() < 2) continue;  // no interval to integrate
    EnergyDevice device;
    device.pid = key.first;
    device.device = key.second;
    Attribute(one, std::span<const EnergySpan>(spans).subspan(begin, end - begin), device,
              out.joules_by_tag);
    out.devices.push_back(device);
    begin = end;
  }
  return out;
}

}  // namespace gpuperf
