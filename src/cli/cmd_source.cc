// gpuperf source: a kernel's source (or SASS) annotated with its PC samples and stall reasons,
// from a trace of `gpuperf record --pc-sampling`.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>

#include "analyze/hardware/pc_profile.h"
#include "base/demangle.h"
#include "base/hardware_advice.h"
#include "base/text_escape.h"
#include "base/text_table.h"
#include "base/units.h"
#include "cli/command.h"
#include "cli/output_file.h"
#include "cli/pid_check.h"
#include "cli/quantity_options.h"

namespace gpuperf::cli {
namespace {

namespace fs = std::filesystem;

struct SourceArgs {
  std::string trace;
  std::string kernel;  // regex; empty: the kernel with the most samples
  bool sass = false;
  std::vector<std::string> source_dirs;
  int context = 3;
  int64_t pid = -1;
  std::string output;
};

std::string TopStalls(const StallCounts& stalls, uint64_t total) {
  std::vector<std::pair<std::string, uint64_t>> sorted(stalls.begin(), stalls.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (size_t i = 0; i < sorted.size() && i < 3; ++i) {
    out += (i ? ", " : "") + sorted[i].first + " " +
           FormatPercent(total ? static_cast<double>(sorted[i].second) / total : 0);
  }
  return out;
}

// A line of source as a table cell shows it: tabs as spaces to the next multiple of 8 and a
// CRLF file's \r dropped (the cell would show them escaped, text_table.h).
std::string SourceLineText(std::string_view line) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  std::string text;
  for (char c : line) {
    if (c == '\t') {
      text.append(8 - text.size() % 8, ' ');
    } else {
      text += c;
    }
  }
  return text;
}

// The source file as recorded, else by its name in one of the --source-dir directories.
std::vector<std::string> ReadSource(const std::string& recorded, const SourceArgs& a,
                                    std::string* found) {
  std::vector<std::string> candidates{recorded};
  const std::string name = fs::path(recorded).filename().string();
  for (const std::string& dir : a.source_dirs) candidates.push_back(dir + "/" + name);
  for (const std::string& path : candidates) {
    std::ifstream in(path);
    if (!in) continue;
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(SourceLineText(line));
    *found = path;
    return lines;
  }
  return {};
}

void Annotated(const PcFunction& f, const SourceArgs& a, std::ostream& out) {
  // Samples per (file, line).
  std::map<std::string, std::map<uint32_t, PcLineRow>> files;
  for (const PcLineRow& row : f.Lines()) {
    if (row.line != 0) files[row.file][row.line] = row;
  }
  for (const auto& [file, lines] : files) {
    uint64_t in_file = 0;
    for (const auto& [n, row] : lines) in_file += row.samples;
    std::string found;
    const std::vector<std::string> text = ReadSource(file, a, &found);
    out << "\n" << DisplayText(file) << "  (" << FormatCount(in_file) << " samples";
    if (found.empty()) out << "; source not found: pass --source-dir";
    if (!found.empty() && found != file) out << "; read from " << DisplayText(found);
    out << ")\n";
    TextTable t;
    for (const char* h : {"Samples", "Share", "Line"}) t.AddColumn(h);
    t.AddColumn("Source", TextTable::Align::kLeft);
    t.AddColumn("Stalls", TextTable::Align::kLeft, 1);
    // Every line between the first and last sampled one, with some context around them.
    std::set<uint32_t> shown;
    for (const auto& [n, row] : lines) {
      const uint32_t from = n > static_cast<uint32_t>(a.context) ? n - a.context : 1;
      for (uint32_t l = from; l <= n + a.context; ++l) shown.insert(l);
    }
    if (!text.empty() && shown.size() < 400) {
      for (uint32_t l = shown.empty() ? 0 : *shown.begin(); !shown.empty() && l <= *shown.rbegin();
           ++l) {
        shown.insert(l);
      }
    }
    uint32_t previous = 0;
    for (uint32_t l : shown) {
      if (!text.empty() && l > text.size()) break;
      if (text.empty() && !lines.count(l)) continue;
      if (previous && l > previous + 1) t.AddRow({"", "", "...", "", ""});
      previous = l;
      auto row = lines.find(l);
      const std::string code = l <= text.size() ? text[l - 1] : std::string();
      if (row == lines.end()) {
        t.AddRow({"", "", std::to_string(l), code, ""});
      } else {
        const PcLineRow& r = row->second;
        t.AddRow({FormatCount(r.samples), FormatPercent(double(r.samples) / f.samples),
                  std::to_string(l), code, TopStalls(r.stalls, r.samples)});
      }
    }
    t.Render(out);
  }
}

void Sass(const PcFunction& f, std::ostream& out) {
  bool any_text = false;
  for (const PcSite& s : f.sites) any_text |= !s.instruction.empty();
  if (!any_text) {
    out << "\n(no SASS text: nvdisasm was not found when the trace was recorded; offsets only)\n";
  }
  TextTable t;
  for (const char* h : {"Offset", "Samples", "Share"}) t.AddColumn(h);
  t.AddColumn("Instruction", TextTable::Align::kLeft);
  t.AddColumn("Line", TextTable::Align::kLeft, 2);
  t.AddColumn("Stalls", TextTable::Align::kLeft, 1);
  std::vector<const PcSite*> sites;
  for (const PcSite& s : f.sites) sites.push_back(&s);
  std::stable_sort(sites.begin(), sites.end(),
                   [](const PcSite* a, const PcSite* b) { return a->pc_offset < b->pc_offset; });
  for (const PcSite* s : sites) {
    char offset[32];
    std::snprintf(offset, sizeof(offset), "%04llx", static_cast<unsigned long long>(s->pc_offset));
    t.AddRow({offset, s->samples ? FormatCount(s->samples) : "",
              s->samples ? FormatPercent(double(s->samples) / f.samples) : "", s->instruction,
              s->line ? fs::path(s->file).filename().string() + ":" + std::to_string(s->line) : "",
              TopStalls(s->stalls, s->samples)});
  }
  out << '\n';
  t.Render(out);
}

int RunSource(const SourceArgs& a) {
  std::optional<uint32_t> pid;
  if (a.pid >= 0) {
    pid = static_cast<uint32_t>(a.pid);
    if (Status known = CheckPidRecorded(a.trace, *pid); !known.ok()) return ReportError(known);
  }
  auto profile = LoadPcProfile(a.trace, pid);
  if (!profile.ok()) return ReportError(profile.status());
  if (profile->functions.empty()) {
    return ReportError(Error(StatusCode::kInvalidArgument,
                             a.trace + " has no PC samples: record with `gpuperf record "
                                       "--pc-sampling -- COMMAND`"));
  }
  std::vector<const PcFunction*> chosen;
  try {
    const std::regex pattern(a.kernel.empty() ? "." : a.kernel);
    for (const PcFunction& f : profile->functions) {
      if (std::regex_search(f.name, pattern) || std::regex_search(Demangle(f.name), pattern)) {
        chosen.push_back(&f);
      }
    }
  } catch (const std::regex_error& e) {
    return ReportError(
        Error(StatusCode::kInvalidArgument, "bad kernel regex '" + a.kernel + "': " + e.what()));
  }
  if (a.kernel.empty() && !chosen.empty()) chosen.resize(1);  // the hottest
  if (chosen.empty()) {
    std::string names;
    for (const PcFunction& f : profile->functions) {
      names += (names.empty() ? "" : ", ") + ShortName(Demangle(f.name));
    }
    return ReportError(Error(StatusCode::kNotFound, "no sampled kernel matches '" + a.kernel +
                                                        "' (sampled: " + names + ")"));
  }
  auto file = OutputFile::Open(a.output, a.trace);
  if (!file.ok()) return ReportError(file.status());
  std::ostream& out = (*file)->stream();
  if ((*file)->is_stdout()) SetTableWidth(out, TerminalWidth(STDOUT_FILENO));
  for (const PcFunction* f : chosen) {
    out << DisplayText(Demangle(f->name)) << "\n  " << FormatCount(f->samples) << " PC samples ("
        << FormatPercent(profile->samples ? double(f->samples) / profile->samples : 0)
        << " of the trace's); stalls: " << TopStalls(f->stalls, f->samples);
    if (f->not_issued > 0) {
      out << "; nothing issued in "
          << FormatPercent(f->samples ? double(f->not_issued) / f->samples : 0);
    }
    out << '\n';
    if (!f->has_lines)
      out << "  " << DisplayText(NoLineInfoLine(ShortName(Demangle(f->name)))) << '\n';
    if (f->has_lines && !a.sass) {
      Annotated(*f, a, out);
    } else {
      Sass(*f, out);
    }
    out << '\n';
  }
  Status status = (*file)->Finish(Status::Ok());
  return status.ok() ? kExitOk : ReportError(status);
}

void RegisterSource(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "source",
      "A kernel's source lines (or SASS) with their PC samples and stall reasons, from a trace "
      "of `gpuperf record --pc-sampling`");
  auto a = std::make_shared<SourceArgs>();
  cmd->add_option("trace", a->trace, "Trace file (.gpt) or directory of trace files")->required();
  cmd->add_option("kernel", a->kernel,
                  "Regular expression for the kernel (mangled or demangled name); default: the "
                  "kernel with the most samples");
  cmd->add_flag("--sass", a->sass, "Show every instruction (SASS) rather than source lines");
  cmd->add_option("--source-dir", a->source_dirs,
                  "Where to look for a source file not at its recorded path (repeatable)");
  TakesCount(cmd->add_option("--context", a->context,
                             "Lines shown around sampled lines (0 to 1000; default 3)"),
             {0, 1000});
  TakesCount(cmd->add_option("--pid", a->pid, "Only this process's samples"), kPidSpec);
  cmd->add_option("-o,--output", a->output, "Write to this file (default: stdout)");
  cmd->callback([a, exit_code] { *exit_code = RunSource(*a); });
}

}  // namespace

GPUPERF_COMMAND(35, RegisterSource);

}  // namespace gpuperf::cli
