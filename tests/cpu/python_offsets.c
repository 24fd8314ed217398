/* CPython's own offsets, from its headers (internal ones need Py_BUILD_CORE), for
 * python_target_test.cc to compare with the tables the CPU profiler and the injection
 * library read interpreters by (src/cpython/python_layout*.h). Built against the
 * headers of the python3 CI has (Debian's python3.11-dev). C: the internal headers are not
 * C++-clean. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>

#include "cpu/python_offsets.h"

void gp_read_real_python_offsets(struct gp_real_python_offsets* out) {
  out->minor = PY_MINOR_VERSION;
  out->interpreters_head = offsetof(_PyRuntimeState, interpreters.head);
  out->threads_head = offsetof(PyInterpreterState, threads.head);
  out->tstate_next = offsetof(PyThreadState, next);
  out->tstate_native_thread_id = offsetof(PyThreadState, native_thread_id);
  out->tstate_thread_id = offsetof(PyThreadState, thread_id);
  out->tstate_cframe = offsetof(PyThreadState, cframe);
  out->cframe_current_frame = offsetof(_PyCFrame, current_frame);
  out->frame_code = offsetof(_PyInterpreterFrame, f_code);
  out->frame_previous = offsetof(_PyInterpreterFrame, previous);
  out->frame_instr = offsetof(_PyInterpreterFrame, prev_instr);
  out->frame_owner = offsetof(_PyInterpreterFrame, owner);
  out->code_first_line = offsetof(PyCodeObject, co_firstlineno);
  out->code_filename = offsetof(PyCodeObject, co_filename);
  out->code_name = offsetof(PyCodeObject, co_name);
  out->code_qualname = offsetof(PyCodeObject, co_qualname);
  out->code_line_table = offsetof(PyCodeObject, co_linetable);
  out->code_bytecode = offsetof(PyCodeObject, co_code_adaptive);
  out->code_first_traceable = offsetof(PyCodeObject, _co_firsttraceable);
#if PY_MINOR_VERSION == 11
  out->frame_is_entry = offsetof(_PyInterpreterFrame, is_entry);
#else
  out->frame_is_entry = -1;
#endif
}
