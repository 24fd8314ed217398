#include "analyze/ranks/clock_alignment.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "analyze/ranks/median.h"
#include "base/units.h"

namespace gpuperf {
namespace {

// CLOCK_REALTIME - CLOCK_MONOTONIC of a process, from its anchors; false without any.
bool WallOffset(const ProcessIdentity& p, std::vector<int64_t>& out) {
  for (const ClockRecord& c : p.clocks) {
    if (c.monotonic_ns != 0 && c.realtime_ns != 0) {
      out.push_back(static_cast<int64_t>(c.realtime_ns - c.monotonic_ns));
    }
  }
  return !out.empty();
}

// The hosts one warning is about: said per host for a few, in one line for many (a job of
// a hundred hosts would otherwise print a hundred lines).
struct HostWarnings {
  static constexpr size_t kPerHost = 3;
  std::vector<std::string> lines;
  int64_t least = 0, most = 0;
  std::string worst;  // the host of `most`

  size_t count() const { return lines.size(); }
  void Add(const HostClock& host, int64_t amount, std::string line) {
    if (lines.empty() || amount < least) least = amount;
    if (lines.empty() || amount > most) most = amount, worst = host.hostname;
    lines.push_back(std::move(line));
  }
  template <class Summary>
  void Say(std::vector<std::string>& out, Summary summary) const {
    if (lines.size() <= kPerHost) {
      out.insert(out.end(), lines.begin(), lines.end());
    } else {
      out.push_back(summary(*this));
    }
  }
};

}  // namespace

const char* ClockMethodName(ClockMethod method) {
  switch (method) {
    case ClockMethod::kReference:
      return "reference";
    case ClockMethod::kWallClock:
      return "wall clock";
    case ClockMethod::kCollectives:
      return "collectives";
    case ClockMethod::kUnaligned:
      return "unaligned";
  }
  return "unknown";
}

bool ClockAlignment::identity() const {
  for (const auto& [pid, offset] : offset_by_pid_) {
    if (offset != 0) return false;
  }
  return true;
}

int64_t ClockAlignment::OffsetOf(uint32_t pid) const {
  auto it = offset_by_pid_.find(pid);
  return it == offset_by_pid_.end() ? 0 : it->second;
}

size_t ClockDomains(const RankScan& scan) {
  std::set<std::string> domains;
  for (const auto& [pid, p] : scan.processes) domains.insert(p.clock_domain());
  return domains.size();
}

ClockAlignment AlignClocks(const RankScan& scan, const MatchedCollectives* collectives) {
  ClockAlignment out;
  if (ClockDomains(scan) < 2) return out;
  // Hosts in the order of their lowest rank: the first is the reference.
  std::map<std::string, size_t> host_of_domain;
  for (const ProcessIdentity* p : scan.InRankOrder()) {
    auto [it, inserted] = host_of_domain.emplace(p->clock_domain(), out.hosts.size());
    if (inserted) {
      out.hosts.emplace_back();
      out.hosts.back().domain = p->clock_domain();
      out.hosts.back().hostname = p->hostname;
    }
    out.hosts[it->second].pids.push_back(p->pid);
  }
  // Step 1: wall-clock anchors.
  std::vector<bool> anchored(out.hosts.size());
  std::vector<int64_t> wall(out.hosts.size());
  for (size_t h = 0; h < out.hosts.size(); ++h) {
    std::vector<int64_t> offsets;
    for (uint32_t pid : out.hosts[h].pids) WallOffset(*scan.Find(pid), offsets);
    anchored[h] = !offsets.empty();
    wall[h] = UpperMedian(offsets);
  }
  std::map<uint32_t, size_t> host_of_pid;
  for (size_t h = 0; h < out.hosts.size(); ++h) {
    for (uint32_t pid : out.hosts[h].pids) host_of_pid[pid] = h;
  }
  for (size_t h = 1; h < out.hosts.size(); ++h) {
    HostClock& host = out.hosts[h];
    if (!anchored[h] || !anchored[0]) {
      host.method = ClockMethod::kUnaligned;
      host.uncertainty_ns = -1;
      out.warnings.push_back("the clocks of " + host.hostname + " and " + out.hosts[0].hostname +
                             " cannot be aligned (no clock anchors): times across them are "
                             "not comparable");
      continue;
    }
    host.method = ClockMethod::kWallClock;
    host.anchor_offset_ns = host.offset_ns = wall[h] - wall[0];
    host.uncertainty_ns = -1;
  }
  // Step 2: collectives seen on the reference host and another end together.
  std::vector<std::vector<int64_t>> residuals(out.hosts.size());
  if (collectives != nullptr) {
    for (const CollectiveInstance& instance : collectives->instances) {
      std::vector<std::vector<int64_t>> ends(out.hosts.size());
      for (const auto& a : instance.arrivals) {
        auto it = host_of_pid.find(a.pid);
        if (it == host_of_pid.end()) continue;
        ends[it->second].push_back(static_cast<int64_t>(a.end_ns) +
                                   out.hosts[it->second].offset_ns);
      }
      if (ends[0].empty()) continue;
      const int64_t reference_end = UpperMedian(ends[0]);
      for (size_t h = 1; h < out.hosts.size(); ++h) {
        if (!ends[h].empty() && out.hosts[h].method == ClockMethod::kWallClock) {
          residuals[h].push_back(reference_end - UpperMedian(ends[h]));
        }
      }
    }
  }
  // Warnings per kind: one line per host, or for many hosts one line for all of them.
  HostWarnings disagreed, wall_only, few, uncertain;
  for (size_t h = 1; h < out.hosts.size(); ++h) {
    HostClock& host = out.hosts[h];
    if (!residuals[h].empty()) {
      const int64_t correction = UpperMedian(residuals[h]);
      host.offset_ns += correction;
      host.method = ClockMethod::kCollectives;
      host.collectives = static_cast<uint32_t>(residuals[h].size());
      // A robust spread (1.4826 x the median absolute deviation estimates one standard
      // deviation); with fewer than three collectives there is no spread to speak of.
      std::vector<int64_t> deviations;
      for (int64_t r : residuals[h]) deviations.push_back(std::llabs(r - correction));
      host.max_deviation_ns = *std::max_element(deviations.begin(), deviations.end());
      if (residuals[h].size() >= 3) {
        host.uncertainty_ns = static_cast<int64_t>(std::ceil(1.4826 * UpperMedian(deviations)));
      } else {
        host.uncertainty_ns = -1;
      }
      if (std::llabs(correction) > static_cast<int64_t>(kClockWarnNs)) {
        disagreed.Add(host, std::llabs(correction),
                      "the wall clocks of " + host.hostname + " and " + out.hosts[0].hostname +
                          " disagreed by " +
                          FormatDuration(static_cast<uint64_t>(std::llabs(correction))) +
                          "; corrected on " + std::to_string(host.collectives) + " collectives");
      }
    } else if (host.method == ClockMethod::kWallClock) {
      wall_only.Add(host, 0,
                    host.hostname + " is aligned with " + out.hosts[0].hostname +
                        " by wall clock only (no collective seen on both): off by the "
                        "hosts' NTP error, which gpuperf cannot measure");
    }
    if (host.method == ClockMethod::kCollectives) {
      if (host.uncertainty_ns < 0) {
        few.Add(host, 0,
                host.hostname + "'s alignment rests on " + std::to_string(host.collectives) +
                    " collective(s): its uncertainty is unknown");
      } else if (host.uncertainty_ns > static_cast<int64_t>(kClockWarnNs)) {
        uncertain.Add(host, host.uncertainty_ns,
                      host.hostname + "'s alignment is uncertain by " +
                          FormatDuration(static_cast<uint64_t>(host.uncertainty_ns)) +
                          ": differences across hosts smaller than that mean nothing");
      }
    }
  }
  const std::string& reference = out.hosts[0].hostname;
  disagreed.Say(out.warnings, [&](const HostWarnings& w) {
    return "the wall clocks of " + std::to_string(w.count()) + " hosts disagreed with " +
           reference + "'s by " + FormatDuration(static_cast<uint64_t>(w.least)) + " to " +
           FormatDuration(static_cast<uint64_t>(w.most)) + " (" + w.worst +
           "); corrected on their collectives";
  });
  wall_only.Say(out.warnings, [&](const HostWarnings& w) {
    return std::to_string(w.count()) + " hosts (" + w.worst + ", ...) are aligned with " +
           reference +
           " by wall clock only (no collective seen on both): off by the hosts' NTP error, "
           "which gpuperf cannot measure";
  });
  few.Say(out.warnings, [&](const HostWarnings& w) {
    return "the alignment of " + std::to_string(w.count()) + " hosts (" + w.worst +
           ", ...) rests on fewer than 3 collectives: their uncertainty is unknown";
  });
  uncertain.Say(out.warnings, [&](const HostWarnings& w) {
    return "the alignment of " + std::to_string(w.count()) + " hosts is uncertain by up to " +
           FormatDuration(static_cast<uint64_t>(w.most)) + " (" + w.worst +
           "): differences across hosts smaller than that mean nothing";
  });
  for (const HostClock& host : out.hosts) {
    for (uint32_t pid : host.pids) out.offset_by_pid_[pid] = host.offset_ns;
  }
  return out;
}

}  // namespace gpuperf
