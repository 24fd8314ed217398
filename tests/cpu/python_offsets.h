/* The real interpreter's offsets (python_offsets.c), for python_target_test.cc. */
#ifndef GPUPERF_TESTS_CPU_PYTHON_OFFSETS_H_
#define GPUPERF_TESTS_CPU_PYTHON_OFFSETS_H_

#ifdef __cplusplus
extern "C" {
#endif

struct gp_real_python_offsets {
  int minor;
  long interpreters_head, threads_head, tstate_next, tstate_native_thread_id, tstate_thread_id;
  long tstate_cframe, cframe_current_frame;
  long frame_code, frame_previous, frame_instr, frame_owner, frame_is_entry;
  long code_first_line, code_filename, code_name, code_qualname, code_line_table;
  long code_bytecode, code_first_traceable;
};

void gp_read_real_python_offsets(struct gp_real_python_offsets* out);

#ifdef __cplusplus
}
#endif

#endif /* GPUPERF_TESTS_CPU_PYTHON_OFFSETS_H_ */
