// The PythonCodeRecord of a code object a recorder copied (cpython/python_lines.h
// PyCodeInfo): one conversion for the injection library's launch stacks and the CPU
// profiler's samples (src/ebpf/python_target.h), so both write the same records.
#pragma once

#include <cstdint>
#include <utility>

#include "cpython/python_lines.h"
#include "gpuperf/records.h"

namespace gpuperf {

// `intern` turns a std::string into the writer's StringId.
template <typename Intern>
PythonCodeRecord MakePythonCodeRecord(uint32_t pid, uint32_t code_id, PyCodeInfo&& code,
                                      Intern&& intern) {
  PythonCodeRecord record;
  record.pid = pid;
  record.code_id = code_id;
  record.name = intern(code.name);
  record.file = intern(code.filename);
  record.first_line = code.first_line;
  record.python_version = code.python_version;
  record.line_format = static_cast<uint8_t>(code.line_format);
  record.code_units = code.code_units;
  record.first_traceable = code.first_traceable;
  record.line_table = std::move(code.line_table);
  return record;
}

}  // namespace gpuperf
