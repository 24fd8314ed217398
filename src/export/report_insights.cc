#include "export/report_insights.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "analyze/insights/rules.h"
#include "base/text_escape.h"
#include "base/text_table.h"
#include "base/units.h"

namespace gpuperf {
namespace {

std::string Fixed(double value, int decimals) {
  char text[48];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

std::string Value(const Evidence& e) {
  switch (e.unit) {
    case EvidenceUnit::kCount:
      return FormatCount(static_cast<uint64_t>(e.value));
    case EvidenceUnit::kNanoseconds:
      return FormatDuration(static_cast<uint64_t>(e.value));
    case EvidenceUnit::kBytes:
      return FormatBytes(static_cast<uint64_t>(e.value));
    case EvidenceUnit::kFraction:
      return FormatPercent(e.value);
    case EvidenceUnit::kBytesPerSecond:
      return FormatBandwidth(static_cast<uint64_t>(e.value), 1'000'000'000);
    case EvidenceUnit::kWatts:
      return Fixed(e.value, 0) + " W";
    case EvidenceUnit::kJoules:
      return Fixed(e.value, 3) + " J";
  }
  return "";
}

std::string AtStake(const Insight& in) {
  switch (in.stake) {
    case StakeKind::kGpuIdle:
      return FormatDuration(in.at_stake_ns) + " of GPU idle time";
    case StakeKind::kGpuTime:
      return FormatDuration(in.at_stake_ns) + " of GPU time in this work";
    case StakeKind::kCpuBlocked:
      return FormatDuration(in.at_stake_ns) + " of CPU time in these calls";
    case StakeKind::kMemory:
      return FormatBytes(in.at_stake_bytes) + " of device memory";
    case StakeKind::kEnergy:
      return Fixed(in.at_stake_joules, 3) + " J of GPU energy (estimate)";
  }
  return "";
}

}  // namespace

void InsightsText(const ReportModel& model, std::ostream& out) {
  out << "\nInsights  (";
  if (model.insights.empty()) {
    std::string rules;
    for (const insights::Rule& rule : insights::ProcessRules()) {
      rules += (rules.empty() ? "" : ", ") + std::string(rule.id);
    }
    // The rules across ranks ran too when the report found ranks.
    const bool ranks = std::any_of(model.ranks.ranks.begin(), model.ranks.ranks.end(),
                                   [](const RankRow& r) { return r.rank >= 0; });
    for (const insights::RankRule& rule : insights::RankRules()) {
      if (ranks) rules += ", " + std::string(rule.id);
    }
    out << "none found by " << rules << ")\n";
    return;
  }
  out << model.insights.size() << (model.insights.size() == 1 ? " finding" : " findings")
      << ", most time at stake first)\n";
  for (size_t i = 0; i < model.insights.size(); ++i) {
    const Insight& in = model.insights[i];
    const std::string number = std::to_string(i + 1) + ". ";
    WriteNote(out, number + in.finding, "  ");
    const std::string indent(2 + number.size(), ' ');
    std::string where = "[" + in.rule + "] pid " + std::to_string(in.pid);
    if (in.device) where += ", GPU " + std::to_string(*in.device);
    WriteNote(out, where + "; at stake: " + AtStake(in), indent);
    std::string evidence;
    for (const Evidence& e : in.evidence) {
      evidence += (evidence.empty() ? "evidence: " : ", ") + e.name + " " + Value(e);
    }
    WriteNote(out, evidence, indent);
    if (!in.stack_role.empty()) {
      out << indent << DisplayText(in.stack_role) << ":";
      if (in.stack.empty()) {
        out << " (no stack in the trace)\n";
      } else {
        out << '\n';
        for (const std::string& frame : in.stack) {
          out << indent << "  " << DisplayText(frame) << '\n';
        }
      }
    }
    WriteNote(out, "try: " + in.suggestion, indent);
  }
}

nlohmann::ordered_json InsightsJson(const ReportModel& model) {
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (size_t i = 0; i < model.insights.size(); ++i) {
    const Insight& in = model.insights[i];
    nlohmann::ordered_json j;
    j["rank"] = i + 1;
    j["rule"] = in.rule;
    j["finding"] = in.finding;
    j["pid"] = in.pid;
    if (in.device) j["device"] = *in.device;
    j["at_stake"] = {
        {"kind", StakeKindName(in.stake)}, {"ns", in.at_stake_ns}, {"bytes", in.at_stake_bytes}};
    if (in.stake == StakeKind::kEnergy) j["at_stake"]["joules"] = in.at_stake_joules;
    nlohmann::ordered_json evidence = nlohmann::ordered_json::array();
    for (const Evidence& e : in.evidence) {
      nlohmann::ordered_json item;
      item["name"] = e.name;
      if (e.unit == EvidenceUnit::kFraction || e.unit == EvidenceUnit::kWatts ||
          e.unit == EvidenceUnit::kJoules) {
        item["value"] = e.value;
      } else {
        item["value"] = static_cast<uint64_t>(e.value);
      }
      item["unit"] = EvidenceUnitName(e.unit);
      evidence.push_back(std::move(item));
    }
    j["evidence"] = std::move(evidence);
    j["stack_role"] = in.stack_role;
    j["stack"] = in.stack;
    j["suggestion"] = in.suggestion;
    all.push_back(std::move(j));
  }
  return all;
}

}  // namespace gpuperf
