#include <algorithm>

#include "export/report_export.h"

namespace gpuperf {

bool ReportRenderOptions::Wants(std::string_view section) const {
  return sections.empty() || std::find(sections.begin(), sections.end(), section) != sections.end();
}

Status ParseReportSections(std::string_view list, std::vector<std::string>& out) {
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view name = list.substr(pos, comma - pos);
    if (!name.empty()) {
      if (std::find(std::begin(kReportSections), std::end(kReportSections), name) ==
          std::end(kReportSections)) {
        std::string valid;
        for (std::string_view s : kReportSections)
          valid += (valid.empty() ? "" : ", ") + std::string(s);
        return Error(StatusCode::kInvalidArgument, "unknown report section '" + std::string(name) +
                                                       "' (sections: " + valid + ")");
      }
      out.emplace_back(name);
    }
    pos = comma + 1;
  }
  return Status::Ok();
}

}  // namespace gpuperf
