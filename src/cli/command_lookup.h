// What `record` checks before it forks: that the command can be run, and if not, the real
// reason in one line, as a shell would judge it (exit 127: not found; 126: found but not
// runnable). After fork an exec failure could only say "No such file or directory", which for
// a script whose interpreter is missing names the wrong file.
#pragma once

#include <string>

namespace gpuperf::cli {

struct CommandCheck {
  int exit_code = 0;    // 0: runnable; else 126 or 127, as shells report
  std::string message;  // why not, for "gpuperf: error: ..."
};

// execvp's search for `command` (through PATH when it has no '/'), then what exec would need
// of the file found: execute permission, and an interpreter that exists (the #! line of a
// script, the dynamic loader of an ELF program).
CommandCheck CheckCommand(const std::string& command);

}  // namespace gpuperf::cli
