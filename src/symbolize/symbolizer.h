// Turns the raw PCs of a recorded trace into function names, source lines and inline
// chains, on the recording host, right after the recording (the binaries are there and
// unchanged), and stores them in the trace as SymbolRecords, so the trace shows names
// wherever it is opened later.
//
// Each PC is mapped to the ModuleRecord that contains it; each module file is opened once
// with libdw (separate debug info found through build-id / debuglink as the system has
// it) and checked against the build-id recorded at run time, so a binary rebuilt since the
// recording is skipped instead of giving wrong names. Names come from DWARF (inline
// chains included) or, without debug info, from the ELF symbol table; a PC that resolves
// to nothing still gets a record (module + offset, no function), shown as
// "libfoo.so+0x1234".
//
// Return addresses: stacks hold return addresses, which point at the instruction after
// the call and may belong to the next line or even the next function. The lookup uses
// pc-1 for them; this is the one place where that adjustment is made (the trace keeps raw
// PCs). SymbolRecord.pc and SymbolFrame.module_offset stay the raw values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuperf/status.h"

namespace gpuperf {

struct SymbolizeOptions {
  // Whether the innermost PC of a stack is a return address too. True for stacks taken by
  // CaptureStack (it drops its own frame, so every PC is the return address of a call);
  // false for stacks whose first PC is an interrupted instruction (sampled stacks, uprobe
  // hits at a function's entry). Every PC that is not innermost is a return address.
  bool innermost_is_return_address = true;
  // Refuse a module whose on-disk build-id differs from the recorded one.
  bool verify_build_id = true;
};

struct SymbolizeSummary {
  uint32_t files = 0;
  uint64_t pcs = 0;                 // distinct (pid, pc) in the stacks
  uint64_t already_symbolized = 0;  // had a named SymbolRecord before this run: kept
  uint64_t with_source = 0;         // function and file:line
  uint64_t function_only = 0;       // a function name from the symbol table
  uint64_t unresolved = 0;          // module+offset only
  uint64_t outside_modules = 0;     // in no recorded module (JIT code, or a module missed)
  uint64_t modules_used = 0;        // modules that hold at least one PC
  uint64_t modules_missing = 0;     // file no longer there or not a file ([vdso])
  uint64_t modules_build_id_mismatch = 0;
  uint64_t modules_unreadable = 0;  // there but not an ELF libdw could read
  uint64_t symbols_written = 0;
  uint32_t files_being_recorded = 0;  // of a directory: still written by a process, left alone
  std::vector<std::string> warnings;  // one line per problem module, for humans

  // One line: "symbolized 1234 PCs: 1100 with source lines, ...".
  std::string ToString() const;
};

// Symbolizes one trace file, or every *.gpt file of a directory, appending SymbolRecords
// to each file. A file that a process still writes is left alone (gpuperf/trace_lock.h):
// kBusy for one file; in a directory, one warning and the other files. PCs that already have a
// named SymbolRecord are skipped, so running it again changes nothing (and a PC that had only
// module+offset is tried again, in case debug info was installed since). `summary` may be null.
Status SymbolizeTraceFile(const std::string& path, const SymbolizeOptions& options,
                          SymbolizeSummary* summary);

}  // namespace gpuperf
