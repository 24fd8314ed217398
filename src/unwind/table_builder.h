// Compiles the table unwinder's tables (unwind_table.h) on a background thread, only for the
// modules that launch stacks run through, so that no application thread waits for them.
//
// Why not at start-up: a PyTorch process maps libtorch_cpu, libtorch_cuda, libcublasLt and
// cuDNN, several million rows that take most of a second of CPU time and tens of MB to
// compile, and most of its hundreds of modules never appear on a launch stack. So:
//   - StartTableBuilder() lists the loaded modules (quick), each with a pending table, and
//     starts the thread;
//   - a capture whose table walk stopped at a pending table, or at a PC in no known module
//     (a library loaded since), unwinds that stack with libunwind as usual and hands its
//     PCs to RequestTables(), which marks the pending modules of the whole stack as wanted
//     (or asks for a rescan) and wakes the thread;
//   - the thread compiles what is wanted and publishes the tables; from then on those
//     stacks are walked from the tables.
// The thread also rescans once a second when the loader's counts moved (a library was
// unloaded: its range must not keep the old table). It blocks all signals, never touches
// the application's state, and is never joined: it waits in a futex when idle, and the
// process may exit while it compiles (everything it uses is never freed).
#pragma once

#include <cstdint>

#include "unwind/unwind_table.h"

namespace gpuperf {

// Lists the modules and starts the builder thread, once (later calls return the first
// answer). The thread calls `on_compiled` after each table it compiles. False when the thread could
// not be started: then nothing is ever compiled and every table walk falls back.
bool StartTableBuilder(UnwindTables::CompiledFn on_compiled = nullptr);

// From the capture path, with the (untrimmed) PCs of a stack the table walk could not
// finish for want of tables. No allocation and no locks; a futex wake (one system call)
// only when it asks for something new.
void RequestTables(const uint64_t* pcs, int depth);

// While idle (an attach window has ended, docs/attach.md), the thread sleeps until woken
// instead of looking at the loader once a second; a window that starts again lets it look.
// Its tables stay for the next window.
void SetTableBuilderIdle(bool idle);

// How many tables the builder compiled so far (for the log).
uint64_t TablesBuilt();

}  // namespace gpuperf
