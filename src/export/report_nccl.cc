// The ranks section's NCCL part: what NCCL's profiler plugin said about each communicator's
// collectives (analyze/ranks/nccl_analysis.h), in text and JSON. Nothing at all for traces
// without plugin records, so their reports keep their form.
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "base/text_table.h"
#include "base/units.h"
#include "export/report_ranks.h"

namespace gpuperf {
namespace {

std::string Hash(uint64_t hash) {
  char text[24];
  std::snprintf(text, sizeof(text), "%016" PRIx64, hash);
  return text;
}

std::string Communicator(const NcclCollectiveRow& row) {
  return row.comm_name.empty() ? Hash(row.comm_hash) : row.comm_name;
}

double Rounded(double value) {
  return std::round(value * 1e6) / 1e6;
}

std::string Gbps(double gbps, uint64_t time_ns) {
  if (time_ns == 0) return "-";
  char text[32];
  std::snprintf(text, sizeof(text), "%.3g GB/s", gbps);
  return text;
}

}  // namespace

void WriteNcclText(const RanksModel& r, std::ostream& out) {
  if (r.nccl.empty()) return;
  TextTable t;
  t.AddColumn("NCCL", TextTable::Align::kLeft);
  t.AddColumn("Communicator", TextTable::Align::kLeft);
  for (const char* h :
       {"Ranks", "Calls", "Instances", "Bytes", "Size min", "Size max", "Time", "Algbw", "Busbw"}) {
    t.AddColumn(h);
  }
  t.AddColumn("Algorithm", TextTable::Align::kLeft, 4);
  for (const NcclCollectiveRow& row : r.nccl) {
    t.AddRow(
        {row.func, Communicator(row), std::to_string(row.ranks) + "/" + std::to_string(row.nranks),
         FormatCount(row.calls), FormatCount(row.instances), FormatBytes(row.bytes),
         FormatBytes(row.min_bytes), FormatBytes(row.max_bytes), FormatDuration(row.time_ns),
         Gbps(row.algbw_gbps, row.time_ns), Gbps(row.busbw_gbps, row.time_ns), row.algorithms});
  }
  out << '\n';
  t.Render(out);
  std::string note =
      "From NCCL's profiler plugin: Instances by sequence number; Bytes and bandwidths as "
      "nccl-tests counts them; Time: from the last rank's kernel start to the last rank's "
      "kernel end (waiting for a late rank left out)";
  if (r.nccl_unjoined) {
    note += "; " + FormatCount(r.nccl_unjoined) + " collectives had no kernel found for them";
  }
  WriteNote(out, note);
}

nlohmann::ordered_json NcclToJson(const RanksModel& r) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const NcclCollectiveRow& row : r.nccl) {
    rows.push_back({{"func", row.func},
                    {"comm_hash", Hash(row.comm_hash)},
                    {"comm_name", row.comm_name},
                    {"nranks", row.nranks},
                    {"ranks", row.ranks},
                    {"calls", row.calls},
                    {"instances", row.instances},
                    {"complete_instances", row.complete},
                    {"bytes", row.bytes},
                    {"min_bytes", row.min_bytes},
                    {"max_bytes", row.max_bytes},
                    {"timed_instances", row.timed},
                    {"timed_bytes", row.timed_bytes},
                    {"time_ns", row.time_ns},
                    {"algbw_gbps", Rounded(row.algbw_gbps)},
                    {"busbw_gbps", Rounded(row.busbw_gbps)},
                    {"unjoined", row.unjoined},
                    {"algorithms", row.algorithms}});
  }
  return {{"collectives", std::move(rows)},
          {"matched_by_sequence", r.matched_by_sequence},
          {"unjoined", r.nccl_unjoined},
          {"kernels_unjoined", r.nccl_kernels_unjoined}};
}

}  // namespace gpuperf
