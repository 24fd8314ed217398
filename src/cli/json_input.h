// Telling a report JSON from a trace: `gpuperf diff` reads both, and the commands that
// read only traces say what to do with a report instead of just "not a trace".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "gpuperf/status.h"

namespace gpuperf::cli {

// Whether `path` is a regular file whose first non-blank byte is '{' (the output of
// `gpuperf report --json`). Never blocks: a FIFO or a device is not looked into.
bool LooksLikeJsonFile(const std::string& path);

// The JSON document in `path`; `expected` says what it should have been, for the error when
// it is not JSON ("the output of `gpuperf report --json`").
Result<nlohmann::ordered_json> ReadJsonFile(const std::string& path, const std::string& expected);

// A "not a gpuperf trace" error about a report JSON becomes one that suggests
// `gpuperf diff`; any other status is returned as it is.
Status ExplainNotATrace(Status status, const std::string& path);

}  // namespace gpuperf::cli
