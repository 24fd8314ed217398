// gpuperf diff: compares a baseline report with a new trace or report, and fails (for
// CI) when a --fail-if condition is violated.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "analyze/diff/hardware_conditions.h"
#include "analyze/diff/report_diff.h"
#include "analyze/report/report_model.h"
#include "base/quantity.h"
#include "base/text_escape.h"
#include "cli/command.h"
#include "cli/json_input.h"
#include "cli/output_file.h"
#include "cli/quantity_options.h"
#include "export/diff_text.h"
#include "export/report_json.h"

namespace gpuperf::cli {
namespace {

struct DiffArgs {
  std::string base;
  std::string now;
  std::vector<std::string> fail_if;
  int64_t top = 20;
  uint64_t min_time_ns = 0;
};

// A report from a `report --format json` file, or built from a trace. `what` names it
// in messages ("the baseline").
Result<ReportModel> LoadReport(const std::string& path, const char* what) {
  if (LooksLikeJsonFile(path)) {
    GP_ASSIGN_OR_RETURN(nlohmann::ordered_json doc,
                        ReadJsonFile(path, "the output of `gpuperf report --json`"));
    auto model = ReportFromJson(doc, what);
    if (model.ok() && (!doc.contains("summary") || !doc.contains("kernels"))) {
      return Error(StatusCode::kInvalidArgument,
                   std::string(what) +
                       " lacks the summary or kernels section: write baselines with "
                       "`gpuperf report --json` and no --sections");
    }
    return model;
  }
  auto model = BuildReport(path, ReportOptions{});
  if (!model.ok()) return model.status();
  ReadReport warnings;
  warnings.warnings = model->read_warnings;
  PrintReadWarnings(warnings);
  return model;
}

int RunDiff(const DiffArgs& a) {
  std::vector<FailCondition> conditions;
  std::vector<HardwareCondition> hardware_conditions;
  for (const std::string& text : a.fail_if) {
    if (IsHardwareCondition(text)) {
      auto c = ParseHardwareCondition(text);
      if (!c.ok()) return ReportError(c.status());
      hardware_conditions.push_back(*c);
      continue;
    }
    auto c = ParseFailCondition(text);
    if (!c.ok()) return ReportError(c.status());
    conditions.push_back(*c);
  }
  auto base = LoadReport(a.base, "the baseline");
  if (!base.ok()) return ReportError(base.status());
  auto now = LoadReport(a.now, "the new report");
  if (!now.ok()) return ReportError(now.status());
  const ReportDiff diff = DiffReports(*base, *now);

  DiffTextOptions options;
  options.base_label = a.base;
  options.new_label = a.now;
  options.top = a.top < 0 ? 0 : static_cast<uint32_t>(a.top);
  auto out = OutputFile::Open("-");
  if (!out.ok()) return ReportError(out.status());
  Status status = ExportDiffText(diff, options, (*out)->stream());
  status = (*out)->Finish(status);
  if (!status.ok()) return ReportError(status);

  std::vector<std::string> violations = CheckFailConditions(diff, conditions, a.min_time_ns);
  for (std::string& v : CheckHardwareConditions(*base, *now, hardware_conditions)) {
    violations.push_back(std::move(v));
  }
  for (const std::string& v : violations)
    std::fprintf(stderr, "gpuperf: regression: %s\n", DisplayText(v).c_str());
  return violations.empty() ? kExitOk : kExitFailure;
}

void RegisterDiff(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "diff",
      "Compare a baseline report with a new trace or report: per-kernel and per-API changes; "
      "--fail-if conditions make it a CI gate (exit 1 on regression)");
  auto a = std::make_shared<DiffArgs>();
  cmd->add_option("baseline", a->base, "Baseline: JSON from `gpuperf report --json`, or a trace")
      ->required();
  cmd->add_option("new", a->now, "New trace (file or directory) or report JSON")->required();
  std::string metrics;
  for (const DiffMetric& m : kDiffMetrics) metrics += std::string(m.name) + " ";
  cmd->add_option("--fail-if", a->fail_if,
                  "Condition METRIC OP THRESHOLD, repeatable. A signed threshold is a change "
                  "from the baseline (+10%, +2ms), an unsigned one a bound on the new value "
                  "(api_failures>0). Metrics: " +
                      metrics +
                      ". Hardware metrics (gpuperf metrics): kernel:NAME:METRIC OP THRESHOLD "
                      "or range:NAME:METRIC OP THRESHOLD, e.g. 'kernel:copy:dram_pct<50'");
  TakesCount(cmd->add_option("--top", a->top,
                             "Rows per table (default 20; 0 or more than there are: all)"),
             kTopRowsSpec);
  TakesDuration(
      cmd->add_option("--min-time", a->min_time_ns,
                      "Per-kernel/per-API conditions ignore items whose baseline total time is "
                      "below this (e.g. 1ms), to keep tiny kernels' noise out of CI"),
      1, DurationSpec{});
  cmd->footer(
      "Exit status: 0 no condition violated, 1 regression (one 'gpuperf: regression:' line "
      "per violation on stderr), 2 bad arguments, 3 unreadable input.\n"
      "Example: gpuperf report base_run/ --json -o base.json\n"
      "         gpuperf diff base.json new_run/ --fail-if 'total_gpu_time>+10%' "
      "--fail-if 'kernel_avg>+20%' --fail-if 'new_api_errors>0'");
  cmd->callback([a, exit_code] { *exit_code = RunDiff(*a); });
}

}  // namespace

GPUPERF_COMMAND(60, RegisterDiff);

}  // namespace gpuperf::cli
