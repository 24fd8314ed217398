#include "export/report_ranks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "base/text_escape.h"
#include "base/text_table.h"
#include "base/units.h"
#include "format/enum_names.h"

namespace gpuperf {
namespace {

using Align = TextTable::Align;
using Json = nlohmann::ordered_json;

std::string SignedDur(int64_t ns) {
  return (ns < 0 ? "-" : "+") + FormatDuration(static_cast<uint64_t>(ns < 0 ? -ns : ns));
}

std::string Joules(double j) {
  char text[32];
  if (j >= 1000) {
    std::snprintf(text, sizeof(text), "%.2f kJ", j / 1000);
  } else if (j >= 1) {
    std::snprintf(text, sizeof(text), "%.2f J", j);
  } else {
    std::snprintf(text, sizeof(text), "%.1f mJ", j * 1000);
  }
  return text;
}

double Rounded(double value, double scale) {
  return std::round(value * scale) / scale;
}

std::string Devices(const std::vector<uint32_t>& devices) {
  std::string out;
  for (uint32_t d : devices) out += (out.empty() ? "" : ",") + std::to_string(d);
  return out.empty() ? "-" : out;
}

void Clocks(const RanksModel& r, std::ostream& out) {
  if (r.clocks.empty()) {
    out << "  clocks: one host, one CLOCK_MONOTONIC: times across ranks are exact\n";
    return;
  }
  out << "  clocks: " << r.clocks.size() << " hosts, aligned on "
      << DisplayText(r.clocks[0].hostname) << "'s clock\n";
  TextTable t;
  t.AddColumn("Host", Align::kLeft);
  for (const char* h :
       {"Processes", "Method", "Offset", "Correction", "Uncertainty", "Collectives", "Worst"}) {
    t.AddColumn(h);
  }
  for (const HostClock& h : r.clocks) {
    const std::string uncertainty =
        h.method == ClockMethod::kReference ? "0"
        : h.uncertainty_ns < 0              ? "unknown"
                               : "±" + FormatDuration(static_cast<uint64_t>(h.uncertainty_ns));
    const std::string worst =
        h.max_deviation_ns < 0 ? "-" : FormatDuration(static_cast<uint64_t>(h.max_deviation_ns));
    t.AddRow({h.hostname, std::to_string(h.pids.size()), ClockMethodName(h.method),
              SignedDur(h.offset_ns), SignedDur(h.offset_ns - h.anchor_offset_ns), uncertainty,
              std::to_string(h.collectives), worst});
  }
  t.Render(out, "    ");
  WriteNote(out,
            std::string("Offset: added to the host's times; Correction: what its collectives "
                        "changed in the offset its wall clock gave; Worst: the one collective "
                        "that fit it least. Collectives matched by ") +
                (r.matched_by_sequence ? "NCCL's sequence numbers" : "kernel order"),
            "    ");
}

// "rank 1 GPU 1", or "pid 4242 GPU 0" for a process that is not a rank.
std::string DeviceLabel(const RanksModel& ranks, uint32_t pid, uint32_t device) {
  for (const RankRow& row : ranks.ranks) {
    if (row.pid == pid && row.rank >= 0) {
      return "rank " + std::to_string(row.rank) + " GPU " + std::to_string(device);
    }
  }
  return "pid " + std::to_string(pid) + " GPU " + std::to_string(device);
}

}  // namespace

std::string ProcessLabel(const RanksModel& ranks, uint32_t pid) {
  for (const RankRow& row : ranks.ranks) {
    if (row.pid == pid && !row.label.empty()) return row.label;
  }
  return "pid " + std::to_string(pid);
}

void WriteRanksText(const ReportModel& model, std::ostream& out) {
  const RanksModel& r = model.ranks;
  if (r.empty()) return;
  std::set<std::string> hosts;
  size_t ranks = 0;
  for (const RankRow& row : r.ranks) {
    hosts.insert(row.hostname);
    ranks += row.rank >= 0;
  }
  WriteHeading(out, "Ranks",
               FormatCount(ranks) + (ranks == 1 ? " rank" : " ranks") + " on " +
                   FormatCount(hosts.size()) + (hosts.size() == 1 ? " host" : " hosts") +
                   "; communication = NCCL kernels, compute = all other kernels");
  TextTable t;
  t.AddColumn("Rank", Align::kLeft);
  const std::pair<const char*, int> columns[] = {
      {"Host", 5},      {"GPU", 4},         {"Compute", 0},  {"Comm", 0},
      {"Overlap", 0},   {"Exposed", 0},     {"Overlap%", 0}, {"Last", 1},
      {"Delay med", 0}, {"Delay total", 2}, {"Delay max", 3}};
  for (const auto& [header, drop] : columns) t.AddColumn(header, Align::kRight, drop);
  // A rank two processes claim (two runs' traces mixed) is told apart by pid.
  std::map<int32_t, int> claims;
  for (const RankRow& row : r.ranks) ++claims[row.rank];
  for (const RankRow& row : r.ranks) {
    std::string who = row.rank >= 0 ? std::to_string(row.rank) : "pid " + std::to_string(row.pid);
    if (row.rank >= 0 && claims[row.rank] > 1) who += " (pid " + std::to_string(row.pid) + ")";
    t.AddRow({who, row.hostname, Devices(row.devices), FormatDuration(row.compute_ns),
              FormatDuration(row.comm_ns), FormatDuration(row.overlap_ns),
              FormatDuration(row.exposed_comm_ns()),
              row.comm_ns ? FormatPercent(row.overlap_fraction()) : "-",
              FormatCount(row.last_arrivals) + "/" + FormatCount(row.collectives),
              FormatDuration(row.delay_median_ns), FormatDuration(row.delay_total_ns),
              FormatDuration(row.delay_max_ns)});
  }
  t.Render(out);
  WriteNote(out,
            "Overlap: time a communication and a compute kernel ran at once (per GPU); "
            "Exposed: communication with no compute beside it; Last: collectives the rank "
            "reached last, of those it ran; Delay: how much later it started than the "
            "next-latest rank, over those");
  if (!r.collectives.empty()) {
    TextTable c;
    c.AddColumn("Collective", Align::kLeft);
    for (const char* h :
         {"Instances", "Ranks", "Arrival spread med", "Arrival spread max", "End spread med"}) {
      c.AddColumn(h);
    }
    c.AddColumn("Kernel", Align::kLeft);
    for (const CollectiveRow& row : r.collectives) {
      c.AddRow({row.kind, FormatCount(row.instances), std::to_string(row.ranks),
                FormatDuration(row.arrival_spread_median_ns),
                FormatDuration(row.arrival_spread_max_ns), FormatDuration(row.end_spread_median_ns),
                row.name});
    }
    out << '\n';
    c.Render(out);
    std::string note =
        r.matched_by_sequence
            ? "Instances are matched across ranks by communicator and NCCL sequence number "
              "(NCCL's profiler plugin); spreads are latest minus earliest (start, end) over "
              "the ranks"
            : "Instances are matched across ranks by kernel name and order on each rank's "
              "NCCL streams; spreads are latest minus earliest (start, end) over the ranks";
    if (r.unmatched_comm_kernels) {
      note += "; " + FormatCount(r.unmatched_comm_kernels) +
              (r.matched_by_sequence
                   ? " communication kernels ran no collective the plugin described"
                   : " communication kernels had no counterpart on every rank of their "
                     "sequence");
    }
    WriteNote(out, note);
  }
  WriteNcclText(r, out);
  if (r.straggler) {
    const Straggler& s = *r.straggler;
    char share[32];
    std::snprintf(share, sizeof(share), "%.0f%%", s.share_of_waiting * 100);
    out << "  straggler: " << DisplayText(s.label) << " arrived last at "
        << FormatCount(s.last_arrivals) << " of " << FormatCount(s.collectives)
        << " collectives, a median " << FormatDuration(s.delay_median_ns)
        << " after the next rank; " << FormatDuration(s.delay_total_ns) << " of waiting in all ("
        << share << " of all ranks' waiting)\n";
  }
  Clocks(r, out);
  for (const std::string& w : r.warnings) out << "  ! " << DisplayText(w) << '\n';
}

void WriteEnergyText(const ReportModel& model, const ReportRenderOptions& options,
                     std::ostream& out) {
  const EnergyModel& e = model.energy;
  if (e.empty()) return;
  double rate = 0;
  bool averaged = false;
  for (const EnergyDevice& d : e.devices) {
    rate = std::max(rate, d.rate_hz);
    averaged |= d.source == PowerSource::kAveraged;
  }
  char rate_text[32];
  std::snprintf(rate_text, sizeof(rate_text), "%.0f", rate);
  WriteHeading(out, "Energy",
               std::string("an estimate: NVML board power read ") + rate_text +
                   " times a second (" + (averaged ? "averaged" : "instant") +
                   " readings), shared among the kernels running at each moment");
  TextTable d;
  d.AddColumn("GPU", Align::kLeft);
  for (const char* h : {"Readings", "Window", "Sampled", "Kernels", "Idle", "Unsampled kernels",
                        "NVML counter", "Sampled/counter"}) {
    d.AddColumn(h);
  }
  for (const EnergyDevice& dev : e.devices) {
    std::string counter = "-", ratio = "-";
    if (dev.counter_j >= 0) {
      counter = Joules(dev.counter_j);
      if (dev.counter_j > 0) ratio = FormatPercent(dev.sampled_over_counter_j / dev.counter_j);
    }
    d.AddRow({DeviceLabel(model.ranks, dev.pid, dev.device), FormatCount(dev.samples),
              FormatDuration(dev.last_ns - dev.first_ns), Joules(dev.sampled_j),
              Joules(dev.attributed_j), Joules(dev.idle_j), FormatDuration(dev.unsampled_kernel_ns),
              counter, ratio});
  }
  d.Render(out);
  TextTable k;
  for (const char* h : {"Energy%", "Energy", "Avg W", "GPU time", "Calls"}) k.AddColumn(h);
  k.AddColumn("Name", Align::kLeft);
  for (const EnergyKernelRow& row : e.kernels) {
    char watts[32];
    std::snprintf(watts, sizeof(watts), "%.1f", row.watts());
    k.AddRow({FormatPercent(row.share), Joules(row.joules), watts, FormatDuration(row.gpu_ns),
              FormatCount(row.calls),
              options.full_names ? row.name : Ellipsize(row.display_name, options.name_width)});
  }
  out << '\n';
  k.Render(out);
  WriteNote(out,
            "Sampled: the readings' integral over their window; Kernels + Idle = Sampled. "
            "NVML counter: the GPU's energy counter between its first and last reading, "
            "Sampled/counter: the readings' integral over that same stretch against it");
}

Json RanksToJson(const RanksModel& r) {
  Json ranks = Json::array();
  for (const RankRow& row : r.ranks) {
    Json j;
    j["pid"] = row.pid;
    j["rank"] = row.rank;
    j["local_rank"] = row.local_rank;
    j["world_size"] = row.world_size;
    j["label"] = row.label;
    j["hostname"] = row.hostname;
    j["launcher"] = row.launcher;
    j["devices"] = row.devices;
    j["kernels"] = row.kernels;
    j["comm_kernels"] = row.comm_kernels;
    j["compute_ns"] = row.compute_ns;
    j["comm_ns"] = row.comm_ns;
    j["overlap_ns"] = row.overlap_ns;
    j["exposed_comm_ns"] = row.exposed_comm_ns();
    j["overlap_fraction"] = Rounded(row.overlap_fraction(), 1e6);
    j["collectives"] = row.collectives;
    j["last_arrivals"] = row.last_arrivals;
    j["delay_total_ns"] = row.delay_total_ns;
    j["delay_median_ns"] = row.delay_median_ns;
    j["delay_max_ns"] = row.delay_max_ns;
    ranks.push_back(std::move(j));
  }
  Json collectives = Json::array();
  for (const CollectiveRow& row : r.collectives) {
    collectives.push_back({{"kind", row.kind},
                           {"name", row.name},
                           {"instances", row.instances},
                           {"ranks", row.ranks},
                           {"arrival_spread_median_ns", row.arrival_spread_median_ns},
                           {"arrival_spread_max_ns", row.arrival_spread_max_ns},
                           {"end_spread_median_ns", row.end_spread_median_ns}});
  }
  Json clocks = Json::array();
  for (const HostClock& h : r.clocks) {
    clocks.push_back({{"hostname", h.hostname},
                      {"clock_domain", h.domain},
                      {"pids", h.pids},
                      {"method", ClockMethodName(h.method)},
                      {"offset_ns", h.offset_ns},
                      {"wall_clock_offset_ns", h.anchor_offset_ns},
                      {"uncertainty_ns", h.uncertainty_ns},
                      {"collectives", h.collectives},
                      {"max_deviation_ns", h.max_deviation_ns}});
  }
  Json j;
  j["ranks"] = std::move(ranks);
  j["collectives"] = std::move(collectives);
  j["unmatched_comm_kernels"] = r.unmatched_comm_kernels;
  if (!r.nccl.empty()) j["nccl"] = NcclToJson(r);
  if (r.straggler) {
    const Straggler& s = *r.straggler;
    j["straggler"] = {{"pid", s.pid},
                      {"rank", s.rank},
                      {"label", s.label},
                      {"last_arrivals", s.last_arrivals},
                      {"collectives", s.collectives},
                      {"delay_median_ns", s.delay_median_ns},
                      {"delay_total_ns", s.delay_total_ns},
                      {"share_of_waiting", Rounded(s.share_of_waiting, 1e6)}};
  } else {
    j["straggler"] = nullptr;
  }
  j["clocks"] = std::move(clocks);
  j["warnings"] = r.warnings;
  return j;
}

Json EnergyToJson(const EnergyModel& e) {
  Json devices = Json::array();
  for (const EnergyDevice& d : e.devices) {
    devices.push_back(
        {{"pid", d.pid},
         {"device", d.device},
         {"samples", d.samples},
         {"first_ns", d.first_ns},
         {"last_ns", d.last_ns},
         {"rate_hz", Rounded(d.rate_hz, 1e3)},
         {"source", EnumName(d.source)},
         {"sampled_j", Rounded(d.sampled_j, 1e6)},
         {"attributed_j", Rounded(d.attributed_j, 1e6)},
         {"idle_j", Rounded(d.idle_j, 1e6)},
         {"kernel_ns", d.kernel_ns},
         {"unsampled_kernel_ns", d.unsampled_kernel_ns},
         {"counter_j", d.counter_j < 0 ? Json(nullptr) : Json(Rounded(d.counter_j, 1e6))},
         {"sampled_over_counter_j", Rounded(d.sampled_over_counter_j, 1e6)}});
  }
  Json kernels = Json::array();
  for (const EnergyKernelRow& k : e.kernels) {
    kernels.push_back({{"name", k.name},
                       {"display_name", k.display_name},
                       {"calls", k.calls},
                       {"gpu_ns", k.gpu_ns},
                       {"joules", Rounded(k.joules, 1e6)},
                       {"share", Rounded(k.share, 1e6)},
                       {"watts", Rounded(k.watts(), 1e3)}});
  }
  Json j;
  j["estimate"] = true;
  j["method"] =
      "NVML power readings integrated by the trapezoid rule and shared equally among the "
      "kernels running at each moment on that GPU";
  j["attributed_j"] = Rounded(e.attributed_j, 1e6);
  j["idle_j"] = Rounded(e.idle_j, 1e6);
  j["sampled_j"] = Rounded(e.sampled_j, 1e6);
  j["devices"] = std::move(devices);
  j["kernels"] = std::move(kernels);
  return j;
}

}  // namespace gpuperf
