// A host's summary of its part of a job, as a document (`gpuperf report DIR --summary`): the
// report JSON (docs/report.md) plus a "job_part" object with what merging needs beyond it
// (analyze/job/report_merge.h): the processes (identities, clock anchors), the
// communicators, each process's part of the ranks analysis (busy times, NCCL kernels as
// recorded, plugin calls joined to them) and the GPU time of every launch path. And the
// merged report of several summaries, as text and JSON. Schema in docs/multi-rank.md,
// "Per-host summaries".
#pragma once

#include <ostream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "analyze/job/report_merge.h"
#include "export/report_export.h"

namespace gpuperf {

// The version of the "job_part" object; bumped on any incompatible change.
inline constexpr int kJobPartVersion = 1;

// The summary document: the report's JSON with its "job_part".
nlohmann::ordered_json JobPartToJson(const JobPart& part);

// The part a summary document holds; `what` names it in errors. Fails on a report without
// a "job_part" (a plain `report --json`) or of another version.
Result<JobPart> JobPartFromJson(const nlohmann::ordered_json& doc, std::string_view what);

// The merged report: totals, kernels, API, copies and sets, the ranks and the top `top`
// launch paths (0: all), and what summaries cannot give.
Status ExportMergedJobText(const MergedJob& job, const ReportRenderOptions& options, uint32_t top,
                           std::ostream& out);
Status ExportMergedJobJson(const MergedJob& job, const ReportRenderOptions& options, uint32_t top,
                           std::ostream& out);

}  // namespace gpuperf
