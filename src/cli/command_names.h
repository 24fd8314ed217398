// What the CLI says about a command name it does not know: the near misses (typos,
// prefixes) and the list of commands.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuperf::cli {

// The commands `given` is probably a misspelling or a prefix of, best first (ties kept).
std::vector<std::string> CloseCommandNames(std::string_view given,
                                           const std::vector<std::string>& commands);

// "unknown command 'reprot': did you mean 'report'? (commands: record, report, ...)"
std::string UnknownCommandMessage(std::string_view given, const std::vector<std::string>& commands);

}  // namespace gpuperf::cli
