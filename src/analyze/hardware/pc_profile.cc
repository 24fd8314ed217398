#include "analyze/hardware/pc_profile.h"

#include <algorithm>

#include "base/stall_names.h"
#include "gpuperf/trace_reader.h"

namespace gpuperf {

std::string ShortStallName(std::string_view name) {
  for (std::string_view prefix :
       {"smsp__pcsamp_warps_issue_stalled_", "smsp__pcsamp_warps_issue_", "smsp__pcsamp_"}) {
    if (name.starts_with(prefix) && name.size() > prefix.size()) {
      return std::string(name.substr(prefix.size()));
    }
  }
  return std::string(name);
}

void PcProfileCollector::AddSample(std::string_view function, uint64_t cubin_crc,
                                   uint64_t pc_offset, std::string_view stall, uint64_t samples) {
  PcSite& site = sites_[Key{std::string(function), cubin_crc, pc_offset}];
  site.cubin_crc = cubin_crc;
  site.pc_offset = pc_offset;
  if (IsNotIssuedStall(stall)) {
    site.not_issued += samples;
    return;
  }
  site.samples += samples;
  site.stalls[ShortStallName(stall)] += samples;
}

void PcProfileCollector::AddLine(std::string_view function, uint64_t cubin_crc, uint64_t pc_offset,
                                 std::string_view file, uint32_t line,
                                 std::string_view instruction) {
  PcSite& site = sites_[Key{std::string(function), cubin_crc, pc_offset}];
  site.cubin_crc = cubin_crc;
  site.pc_offset = pc_offset;
  if (line != 0) {
    site.file = std::string(file);
    site.line = line;
  }
  if (!instruction.empty()) site.instruction = std::string(instruction);
}

PcProfile PcProfileCollector::Finish() {
  PcProfile profile;
  std::map<std::string, PcFunction> functions;
  for (auto& [key, site] : sites_) {
    PcFunction& f = functions[std::get<0>(key)];
    f.name = std::get<0>(key);
    f.samples += site.samples;
    f.not_issued += site.not_issued;
    for (const auto& [stall, n] : site.stalls) f.stalls[stall] += n;
    f.has_lines |= site.line != 0;
    f.sites.push_back(std::move(site));
  }
  sites_.clear();
  for (auto& [name, f] : functions) {
    // Functions of which only lines were written (disassembled, never sampled) are left out.
    if (f.samples == 0) continue;
    profile.samples += f.samples;
    profile.functions.push_back(std::move(f));
  }
  std::stable_sort(profile.functions.begin(), profile.functions.end(),
                   [](const PcFunction& a, const PcFunction& b) { return a.samples > b.samples; });
  return profile;
}

std::vector<PcLineRow> PcFunction::Lines() const {
  std::map<std::pair<std::string, uint64_t>, PcLineRow> rows;
  for (const PcSite& site : sites) {
    if (site.samples == 0) continue;
    // With a line: one row per (file, line); without: one per instruction.
    const auto key = site.line != 0 ? std::make_pair(site.file, uint64_t{site.line})
                                    : std::make_pair(std::string(), site.pc_offset);
    auto [it, inserted] = rows.try_emplace(key);
    PcLineRow& row = it->second;
    if (inserted) {
      row.file = site.file;
      row.line = site.line;
      row.pc_offset = site.pc_offset;
    }
    row.pc_offset = std::min(row.pc_offset, site.pc_offset);
    row.samples += site.samples;
    row.not_issued += site.not_issued;
    for (const auto& [stall, n] : site.stalls) row.stalls[stall] += n;
  }
  std::vector<PcLineRow> out;
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(),
                   [](const PcLineRow& a, const PcLineRow& b) { return a.samples > b.samples; });
  return out;
}

const PcFunction* PcProfile::Find(std::string_view mangled) const {
  for (const PcFunction& f : functions) {
    if (f.name == mangled) return &f;
  }
  return nullptr;
}

namespace {

class PcProfileSink final : public RecordSink {
 public:
  explicit PcProfileSink(std::optional<uint32_t> pid) : pid_(pid) { strings_.emplace_back(); }
  void OnString(StringId id, std::string_view text) override {
    if (strings_.size() <= id) strings_.resize(id + 1);
    strings_[id] = std::string(text);
  }
  void OnPcSample(const PcSampleRecord& s) override {
    if (pid_ && s.pid != *pid_) return;
    for (const PcStallCount& stall : s.stalls) {
      collector_.AddSample(Str(s.function), s.cubin_crc, s.pc_offset, Str(stall.reason),
                           stall.samples);
    }
  }
  void OnSassLine(const SassLineRecord& l) override {
    collector_.AddLine(Str(l.function), l.cubin_crc, l.pc_offset, Str(l.file), l.line,
                       Str(l.instruction));
  }
  PcProfile Finish() { return collector_.Finish(); }

 private:
  std::string_view Str(StringId id) const {
    return id < strings_.size() ? std::string_view(strings_[id]) : std::string_view();
  }
  std::optional<uint32_t> pid_;
  std::vector<std::string> strings_;
  PcProfileCollector collector_;
};

}  // namespace

Result<PcProfile> LoadPcProfile(const std::string& path, std::optional<uint32_t> pid) {
  PcProfileSink sink(pid);
  ReadReport report;
  GP_RETURN_IF_ERROR(ReadTrace(path, sink, &report));
  return sink.Finish();
}

}  // namespace gpuperf
