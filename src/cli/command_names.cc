#include "cli/command_names.h"

#include <algorithm>
#include <vector>

namespace gpuperf::cli {
namespace {

// Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`: a
// typed "reprot" is one swap away from "report".
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, substitute});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string Quoted(std::string_view name) {
  return "'" + std::string(name) + "'";
}

}  // namespace

std::vector<std::string> CloseCommandNames(std::string_view given,
                                           const std::vector<std::string>& commands) {
  // A near miss is a typo of at most two edits (one for short words), or the start of
  // a command's name.
  const size_t allowed = given.size() <= 4 ? 1 : 2;
  size_t best = allowed + 1;
  std::vector<std::string> close;
  for (const std::string& command : commands) {
    size_t distance = EditDistance(given, command);
    if (given.size() >= 2 && command.compare(0, given.size(), given) == 0) distance = 1;
    if (distance > allowed || distance > best) continue;
    if (distance < best) close.clear();
    best = distance;
    close.push_back(command);
  }
  return close;
}

std::string UnknownCommandMessage(std::string_view given,
                                  const std::vector<std::string>& commands) {
  std::string message = "unknown command " + Quoted(given);
  const std::vector<std::string> close = CloseCommandNames(given, commands);
  for (size_t i = 0; i < close.size(); ++i) {
    message += (i == 0 ? ": did you mean " : " or ") + Quoted(close[i]);
  }
  if (!close.empty()) message += "?";
  std::string list;
  for (const std::string& command : commands) list += (list.empty() ? "" : ", ") + command;
  return message + " (commands: " + list + ")";
}

}  // namespace gpuperf::cli
