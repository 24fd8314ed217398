// The built-in layouts (see python_layout.h), as constants: the walker is compiled once
// per built-in layout with its offsets folded into the loads. 3.13's and 3.14's are used
// when the offsets the walk loop reads equal those an interpreter publishes.
#pragma once

#include "cpython/python_layout.h"

namespace gpuperf::inject {
namespace layout_tables {

constexpr PyLayout Layout310() {
  PyLayout l;
  l.builtin_id = 10;
  l.version = PyVersionHex(3, 10);
  l.flavor = PyFrameFlavor::kFrameObjects;
  l.line_format = PyLineTableFormat::kLineTable310;
  l.tstate_frame = 24;  // prev, next, interp, frame
  // PyFrameObject: PyObject_VAR_HEAD, f_back, f_code, ... int f_lasti (an instruction index).
  l.frame_previous = 24;
  l.frame_code = 32;
  l.frame_instr = 96;
  l.instr_is_pointer = false;
  // PyCodeObject: 7 ints after the header, then co_code, ... co_filename, co_name, co_linetable.
  l.code_first_line = 40;
  l.code_bytecode = 48;
  l.code_filename = 104;
  l.code_name = 112;
  l.code_line_table = 120;
  // PyASCIIObject still has wstr; PyCompactUnicodeObject adds utf8_length, utf8, wstr_length.
  l.unicode_ascii_data = 48;
  l.unicode_compact_data = 72;
  return l;
}

constexpr PyLayout Layout311() {
  PyLayout l;
  l.builtin_id = 11;
  l.version = PyVersionHex(3, 11);
  l.flavor = PyFrameFlavor::kEntryFlag;
  l.line_format = PyLineTableFormat::kLocations311;
  l.tstate_frame = 56;         // cframe
  l.cframe_current_frame = 8;  // after use_tracing
  // _PyInterpreterFrame: f_func, f_globals, f_builtins, f_locals, f_code, frame_obj,
  // previous, prev_instr, int stacktop, bool is_entry, char owner.
  l.frame_code = 32;
  l.frame_previous = 48;
  l.frame_instr = 56;
  l.frame_is_entry = 68;
  l.frame_owner = 69;
  l.instr_is_pointer = true;
  l.code_first_line = 72;
  l.code_filename = 112;
  l.code_name = 120;
  l.code_qualname = 128;
  l.code_line_table = 136;
  l.code_bytecode = 184;  // co_code_adaptive
  l.code_first_traceable = 168;
  l.unicode_ascii_data = 48;
  l.unicode_compact_data = 72;
  return l;
}

constexpr PyLayout Layout312() {
  PyLayout l;
  l.builtin_id = 12;
  l.version = PyVersionHex(3, 12);
  l.flavor = PyFrameFlavor::kShimFrames;
  l.line_format = PyLineTableFormat::kLocations311;
  l.tstate_frame = 56;  // cframe
  l.cframe_current_frame = 0;
  // _PyInterpreterFrame: f_code, previous, f_funcobj, f_globals, f_builtins, f_locals,
  // frame_obj, prev_instr, int stacktop, uint16 return_offset, char owner.
  l.frame_code = 0;
  l.frame_previous = 8;
  l.frame_instr = 56;
  l.frame_owner = 70;
  l.shim_owner = 3;  // FRAME_OWNED_BY_CSTACK
  l.instr_is_pointer = true;
  l.code_first_line = 68;
  l.code_version = 92;  // after 5 more ints
  l.code_filename = 112;
  l.code_name = 120;
  l.code_qualname = 128;
  l.code_line_table = 136;
  l.code_bytecode = 192;
  l.code_first_traceable = 176;
  // wstr is gone: PyASCIIObject is 40 bytes, PyCompactUnicodeObject 56.
  l.unicode_ascii_data = 40;
  l.unicode_compact_data = 56;
  return l;
}

// 3.13 reads its layout from _PyRuntime.debug_offsets; this is what every 3.13 release
// build publishes there (plus _co_firsttraceable, which it does not).
constexpr PyLayout Layout313() {
  PyLayout l;
  l.builtin_id = 13;
  l.version = PyVersionHex(3, 13);
  l.flavor = PyFrameFlavor::kShimFrames;
  l.line_format = PyLineTableFormat::kLocations311;
  l.tstate_frame = 72;  // current_frame
  // _PyInterpreterFrame: f_executable, previous, f_funcobj, f_globals, f_builtins,
  // f_locals, frame_obj, instr_ptr, int stacktop, uint16 return_offset, char owner.
  l.frame_code = 0;
  l.frame_previous = 8;
  l.frame_instr = 56;
  l.frame_owner = 70;
  l.shim_owner = 3;
  l.instr_is_pointer = true;
  l.code_first_line = 68;
  l.code_version = 92;
  l.code_filename = 112;
  l.code_name = 120;
  l.code_qualname = 128;
  l.code_line_table = 136;
  l.code_bytecode = 200;
  l.code_first_traceable = 184;
  l.unicode_ascii_data = 40;
  l.unicode_compact_data = 56;
  return l;
}

// 3.14 reads its layout from _PyRuntime.debug_offsets too. Its frames gain a stackpointer
// before return_offset (owner moves to 74) and f_executable is a tagged _PyStackRef; its
// release builds' code objects are laid out as 3.13's.
constexpr PyLayout Layout314() {
  PyLayout l = Layout313();
  l.builtin_id = 14;
  l.version = PyVersionHex(3, 14);
  l.frame_owner = 74;
  l.code_pointer_mask = ~uint64_t{7};
  return l;
}

}  // namespace layout_tables

inline constexpr PyLayout kPyLayout310 = layout_tables::Layout310();
inline constexpr PyLayout kPyLayout311 = layout_tables::Layout311();
inline constexpr PyLayout kPyLayout312 = layout_tables::Layout312();
inline constexpr PyLayout kPyLayout313 = layout_tables::Layout313();
inline constexpr PyLayout kPyLayout314 = layout_tables::Layout314();

}  // namespace gpuperf::inject
