#include "export/report_summary.h"

#include <algorithm>

#include "base/json_output.h"
#include "base/text_escape.h"
#include "base/text_table.h"
#include "base/units.h"
#include "export/json_fields.h"
#include "export/report_json.h"
#include "export/report_ranks.h"

namespace gpuperf {
namespace {

using Json = nlohmann::ordered_json;
using json_fields::Field;
using json_fields::Number;
using json_fields::Rows;
using json_fields::Text;

Json ProcessToJson(const ProcessIdentity& p) {
  Json clocks = Json::array();
  for (const ClockRecord& c : p.clocks) clocks.push_back({c.monotonic_ns, c.realtime_ns});
  return {{"pid", p.pid},
          {"rank", p.rank},
          {"local_rank", p.local_rank},
          {"world_size", p.world_size},
          {"local_world_size", p.local_world_size},
          {"node_rank", p.node_rank},
          {"launcher", p.launcher},
          {"job_id", p.job_id},
          {"master", p.master},
          {"boot_id", p.boot_id},
          {"visible_devices", p.visible_devices},
          {"hostname", p.hostname},
          {"command", p.command},
          {"devices", p.devices},
          {"clocks", std::move(clocks)}};
}

ProcessIdentity ProcessFromJson(const Json& j) {
  ProcessIdentity p;
  p.pid = Number<uint32_t>(j, "pid");
  p.rank = Number<int32_t>(j, "rank");
  p.local_rank = Number<int32_t>(j, "local_rank");
  p.world_size = Number<int32_t>(j, "world_size");
  p.local_world_size = Number<int32_t>(j, "local_world_size");
  p.node_rank = Number<int32_t>(j, "node_rank");
  p.launcher = Text(j, "launcher");
  p.job_id = Text(j, "job_id");
  p.master = Text(j, "master");
  p.boot_id = Text(j, "boot_id");
  p.visible_devices = Text(j, "visible_devices");
  p.hostname = Text(j, "hostname");
  p.command = Text(j, "command");
  for (const Json& d : Rows(j, "devices")) {
    if (d.is_number()) p.devices.push_back(d.get<uint32_t>());
  }
  for (const Json& c : Rows(j, "clocks")) {
    if (c.is_array() && c.size() == 2 && c[0].is_number() && c[1].is_number()) {
      p.clocks.push_back({p.pid, c[0].get<uint64_t>(), c[1].get<uint64_t>()});
    }
  }
  return p;
}

Json PartialToJson(const RankPartial& p) {
  Json devices = Json::array();
  for (const RankPartial::Device& d : p.devices) {
    devices.push_back({{"device", d.device},
                       {"kernels", d.kernels},
                       {"compute_ns", d.compute_ns},
                       {"comm_ns", d.comm_ns},
                       {"overlap_ns", d.overlap_ns}});
  }
  // One array per kernel, to keep thousands of them small: name (an index into
  // comm_names), stream, device, start, end, correlation id.
  Json comm = Json::array();
  for (const CommKernel& k : p.comm) {
    comm.push_back({k.name, k.stream, k.device, k.start_ns, k.end_ns, k.correlation_id});
  }
  Json calls = Json::array();
  for (const JoinedNcclCall& c : p.calls) {
    calls.push_back({{"comm_hash", c.comm_hash},
                     {"nranks", c.nranks},
                     {"seq", c.seq},
                     {"func", c.func},
                     {"algorithm", c.algorithm},
                     {"bytes", c.bytes},
                     {"kernel", c.kernel},
                     {"share", c.share},
                     {"primary", c.primary}});
  }
  return {{"pid", p.pid},
          {"devices", std::move(devices)},
          {"comm_names", p.comm_names},
          {"comm_kernels", std::move(comm)},
          {"nccl_calls", std::move(calls)},
          {"kernels_unjoined", p.kernels_unjoined}};
}

Result<RankPartial> PartialFromJson(const Json& j, const std::string& what) {
  RankPartial p;
  p.pid = Number<uint32_t>(j, "pid");
  for (const Json& d : Rows(j, "devices")) {
    p.devices.push_back({Number<uint32_t>(d, "device"), Number<uint64_t>(d, "kernels"),
                         Number<uint64_t>(d, "compute_ns"), Number<uint64_t>(d, "comm_ns"),
                         Number<uint64_t>(d, "overlap_ns")});
  }
  p.comm_names.clear();
  for (const Json& n : Rows(j, "comm_names")) {
    p.comm_names.push_back(n.is_string() ? n.get<std::string>() : std::string());
  }
  if (p.comm_names.empty()) p.comm_names.emplace_back();
  const auto bad = [&](const std::string& why) {
    return Error(StatusCode::kInvalidArgument,
                 what + ": pid " + std::to_string(p.pid) + "'s part is damaged: " + why);
  };
  for (const Json& k : Rows(j, "comm_kernels")) {
    if (!k.is_array() || k.size() != 6 ||
        !std::all_of(k.begin(), k.end(), [](const Json& v) { return v.is_number_unsigned(); })) {
      return bad("a communication kernel is not six numbers");
    }
    CommKernel kernel{k[0].get<uint32_t>(), k[1].get<uint32_t>(), k[2].get<uint32_t>(),
                      k[3].get<uint64_t>(), k[4].get<uint64_t>(), k[5].get<uint32_t>()};
    if (kernel.name >= p.comm_names.size()) return bad("a kernel names no known name");
    p.comm.push_back(kernel);
  }
  for (const Json& c : Rows(j, "nccl_calls")) {
    JoinedNcclCall call;
    call.comm_hash = Number<uint64_t>(c, "comm_hash");
    call.nranks = Number<int32_t>(c, "nranks");
    call.seq = Number<uint64_t>(c, "seq");
    call.func = Text(c, "func");
    call.algorithm = Text(c, "algorithm");
    call.bytes = Number<uint64_t>(c, "bytes");
    call.kernel = Field(c, "kernel").is_number() ? Field(c, "kernel").get<int64_t>() : -1;
    call.share = Number<double>(c, "share");
    call.primary = Field(c, "primary").is_boolean() && Field(c, "primary").get<bool>();
    if (call.kernel >= static_cast<int64_t>(p.comm.size())) {
      return bad("a call joins a kernel it does not have");
    }
    p.calls.push_back(std::move(call));
  }
  p.kernels_unjoined = Number<uint64_t>(j, "kernels_unjoined");
  return p;
}

Json StackToJson(const StackWeight& s) {
  Json j;
  if (!s.process.empty()) j["process"] = s.process;
  j["frames"] = s.frames;
  j["gpu_ns"] = s.gpu_ns;
  j["count"] = s.count;
  return j;
}

// The folded form of a path (export/folded.h): frames root first, ';' between them.
std::string Folded(const StackWeight& s) {
  std::string line;
  for (size_t i = 0; i < s.frames.size(); ++i) {
    if (i > 0) line += ';';
    AppendEscaped(line, s.frames[i], TextForm::kDisplay);
  }
  return line;
}

// The sections of a report that a merge fills; those the user did not ask for are left out.
ReportRenderOptions MergedSections(const ReportRenderOptions& options) {
  ReportRenderOptions out = options;
  out.sections.clear();
  for (const char* s :
       {"summary", "loss", "kernels", "runtime_api", "driver_api", "memcpy", "memset", "ranks"}) {
    if (options.Wants(s)) out.sections.emplace_back(s);
  }
  return out;
}

}  // namespace

Json JobPartToJson(const JobPart& part) {
  Json doc = ReportToJson(part.report, ReportRenderOptions());
  Json processes = Json::array();
  for (const auto& [pid, p] : part.scan.processes) processes.push_back(ProcessToJson(p));
  Json comms = Json::array();
  for (const auto& [hash, c] : part.scan.nccl_comms) {
    comms.push_back({{"comm_hash", hash}, {"name", c.name}, {"nranks", c.nranks}});
  }
  Json partials = Json::array();
  for (const RankPartial& p : part.partials) partials.push_back(PartialToJson(p));
  Json stacks = Json::array();
  for (const StackWeight& s : part.stacks) stacks.push_back(StackToJson(s));
  doc["job_part"] = {{"version", kJobPartVersion},
                     {"processes", std::move(processes)},
                     {"nccl_comms", std::move(comms)},
                     {"ranks", std::move(partials)},
                     {"stacks", std::move(stacks)}};
  return doc;
}

Result<JobPart> JobPartFromJson(const Json& doc, std::string_view what) {
  const std::string subject(what);
  GP_ASSIGN_OR_RETURN(ReportModel report, ReportFromJson(doc, what));
  const Json& j = Field(doc, "job_part");
  if (!j.is_object()) {
    return Error(StatusCode::kInvalidArgument,
                 subject +
                     " is a report without a job part: make summaries with "
                     "`gpuperf report DIR --summary`");
  }
  if (Number<int>(j, "version") != kJobPartVersion) {
    return Error(StatusCode::kUnsupportedVersion,
                 subject + " has job part version " + Field(j, "version").dump() +
                     "; this gpuperf reads version " + std::to_string(kJobPartVersion));
  }
  JobPart part;
  part.name = subject;
  part.report = std::move(report);
  for (const Json& p : Rows(j, "processes")) {
    ProcessIdentity identity = ProcessFromJson(p);
    part.scan.processes[identity.pid] = std::move(identity);
  }
  for (const Json& c : Rows(j, "nccl_comms")) {
    part.scan.nccl_comms[Number<uint64_t>(c, "comm_hash")] = {Text(c, "name"),
                                                              Number<int32_t>(c, "nranks")};
  }
  for (const Json& r : Rows(j, "ranks")) {
    GP_ASSIGN_OR_RETURN(RankPartial partial, PartialFromJson(r, subject));
    part.partials.push_back(std::move(partial));
  }
  for (const Json& s : Rows(j, "stacks")) {
    StackWeight w;
    w.process = Text(s, "process");
    for (const Json& f : Rows(s, "frames"))
      w.frames.push_back(f.is_string() ? f.get<std::string>() : "");
    w.gpu_ns = Number<uint64_t>(s, "gpu_ns");
    w.count = Number<uint64_t>(s, "count");
    part.stacks.push_back(std::move(w));
  }
  return part;
}

Status ExportMergedJobText(const MergedJob& job, const ReportRenderOptions& options, uint32_t top,
                           std::ostream& out) {
  out << "Merged from " << job.parts << (job.parts == 1 ? " summary" : " summaries")
      << ": counts and times are exact; not from summaries: ";
  for (size_t i = 0; i < job.not_merged.size(); ++i) out << (i ? ", " : "") << job.not_merged[i];
  out << "\n\n";
  GP_RETURN_IF_ERROR(ExportReportText(job.report, MergedSections(options), out));
  if (options.Wants("stacks") || options.sections.empty()) {
    uint64_t total = 0;
    for (const StackWeight& s : job.stacks) total += s.gpu_ns;
    out << "\nLaunch stacks  (" << job.stacks.size() << " paths, GPU time as the flame graph "
        << "weighs it)\n";
    TextTable t;
    for (const char* h : {"GPU%", "GPU time", "Work"}) t.AddColumn(h);
    t.AddColumn("Stack (root first)", TextTable::Align::kLeft);
    for (size_t i = 0; i < job.stacks.size() && (top == 0 || i < top); ++i) {
      const StackWeight& s = job.stacks[i];
      const double share = total ? 100.0 * static_cast<double>(s.gpu_ns) / total : 0;
      char pct[16];
      std::snprintf(pct, sizeof(pct), "%.1f%%", share);
      t.AddRow({pct, FormatDuration(s.gpu_ns), std::to_string(s.count), Folded(s)});
    }
    t.Render(out);
  }
  out.flush();
  if (!out) return Error(StatusCode::kIoError, "cannot write the report");
  return Status::Ok();
}

Status ExportMergedJobJson(const MergedJob& job, const ReportRenderOptions& options, uint32_t top,
                           std::ostream& out) {
  Json doc = ReportToJson(job.report, MergedSections(options));
  doc["generator"] = "gpuperf report (merged summaries)";
  doc["merged"] = {{"summaries", job.parts}, {"not_merged", job.not_merged}};
  Json stacks = Json::array();
  for (size_t i = 0; i < job.stacks.size() && (top == 0 || i < top); ++i) {
    stacks.push_back(StackToJson(job.stacks[i]));
  }
  doc["stacks"] = std::move(stacks);
  out << DumpJson(std::move(doc)) << '\n';
  out.flush();
  if (!out) return Error(StatusCode::kIoError, "cannot write the report");
  return Status::Ok();
}

}  // namespace gpuperf
