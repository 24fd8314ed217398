// "hardware" and "pc_sampling" in a report document, both ways (schema in docs/report.md).
#include <cmath>

#include "analyze/hardware/hardware_verdict.h"
#include "export/json_fields.h"
#include "export/report_hardware.h"
#include "format/enum_names.h"

namespace gpuperf {
namespace {

using Json = nlohmann::ordered_json;
using json_fields::Number;
using json_fields::Text;

Json Stalls(const StallList& stalls) {
  Json j = Json::object();
  for (const auto& [name, samples] : stalls) j[name] = samples;
  return j;
}

StallList ReadStalls(const Json& j) {
  StallList out;
  if (!j.is_object()) return out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().is_number()) out.emplace_back(it.key(), it.value().get<uint64_t>());
  }
  return out;
}

}  // namespace

void PutHardwareJson(const ReportModel& m, Json& doc) {
  if (!m.hardware.empty()) {
    Json rows = Json::array();
    for (const HardwareRow& r : m.hardware) {
      Json metrics = Json::object();
      // NaN and infinity have no JSON form: left out.
      for (const MetricValue& v : r.metrics) {
        if (std::isfinite(v.value)) metrics[v.metric] = v.value;
      }
      rows.push_back({{"kind", EnumName(r.kind)},
                      {"name", r.name},
                      {"display_name", r.display_name},
                      {"metric_set", r.metric_set},
                      {"ranges", r.ranges},
                      {"passes", r.passes},
                      {"serialized", r.serialized},
                      {"duration_ns", r.duration_ns},
                      {"bound", r.verdict.bound},
                      {"bound_reason", r.verdict.reason},
                      {"metrics", std::move(metrics)}});
    }
    doc["hardware"] = std::move(rows);
  }
  if (!m.pc_sampling.empty()) {
    Json kernels = Json::array();
    for (const PcKernelRow& k : m.pc_sampling) {
      Json lines = Json::array();
      for (const HotLineRow& l : k.lines) {
        lines.push_back({{"file", l.file},
                         {"line", l.line},
                         {"pc_offset", l.pc_offset},
                         {"samples", l.samples},
                         {"stalls", Stalls(l.stalls)}});
      }
      kernels.push_back({{"name", k.name},
                         {"display_name", k.display_name},
                         {"samples", k.samples},
                         {"not_issued", k.not_issued},
                         {"has_lines", k.has_lines},
                         {"stalls", Stalls(k.stalls)},
                         {"lines", std::move(lines)}});
    }
    doc["pc_sampling"] = std::move(kernels);
  }
}

void ReadHardwareJson(const Json& doc, ReportModel& m) {
  if (!doc.is_object()) return;
  if (auto rows = doc.find("hardware"); rows != doc.end() && rows->is_array()) {
    for (const Json& j : *rows) {
      if (!j.is_object()) continue;
      HardwareRow r;
      const std::string kind = Text(j, "kind");
      for (MetricRangeKind k :
           {MetricRangeKind::kKernel, MetricRangeKind::kNvtx, MetricRangeKind::kWindow}) {
        if (EnumName(k) == kind) r.kind = k;
      }
      r.name = Text(j, "name");
      r.display_name = Text(j, "display_name");
      r.metric_set = Text(j, "metric_set");
      r.ranges = Number<uint64_t>(j, "ranges");
      r.passes = Number<uint32_t>(j, "passes");
      r.serialized =
          j.contains("serialized") && j["serialized"].is_boolean() && j["serialized"].get<bool>();
      r.duration_ns = Number<double>(j, "duration_ns");
      if (auto metrics = j.find("metrics"); metrics != j.end() && metrics->is_object()) {
        for (auto it = metrics->begin(); it != metrics->end(); ++it) {
          if (it.value().is_number()) r.metrics.push_back({it.key(), it.value().get<double>()});
        }
      }
      r.verdict = JudgeBound(r);  // recomputed: the same rule gives the same words
      m.hardware.push_back(std::move(r));
    }
  }
  if (auto kernels = doc.find("pc_sampling"); kernels != doc.end() && kernels->is_array()) {
    uint64_t total = 0;
    for (const Json& j : *kernels) {
      if (!j.is_object()) continue;
      PcKernelRow k;
      k.name = Text(j, "name");
      k.display_name = Text(j, "display_name");
      k.samples = Number<uint64_t>(j, "samples");
      k.not_issued = Number<uint64_t>(j, "not_issued");
      k.has_lines =
          j.contains("has_lines") && j["has_lines"].is_boolean() && j["has_lines"].get<bool>();
      k.stalls = ReadStalls(j.contains("stalls") ? j["stalls"] : Json());
      if (auto lines = j.find("lines"); lines != j.end() && lines->is_array()) {
        for (const Json& l : *lines) {
          if (!l.is_object()) continue;
          HotLineRow row;
          row.file = Text(l, "file");
          row.line = Number<uint32_t>(l, "line");
          row.pc_offset = Number<uint64_t>(l, "pc_offset");
          row.samples = Number<uint64_t>(l, "samples");
          row.fraction = k.samples ? static_cast<double>(row.samples) / k.samples : 0;
          row.stalls = ReadStalls(l.contains("stalls") ? l["stalls"] : Json());
          k.lines.push_back(std::move(row));
        }
      }
      total += k.samples;
      m.pc_sampling.push_back(std::move(k));
    }
    for (PcKernelRow& k : m.pc_sampling) {
      k.fraction = total ? static_cast<double>(k.samples) / total : 0;
    }
  }
}

}  // namespace gpuperf
