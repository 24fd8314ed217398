/* What the CPU profiler's BPF programs (cpu_profile.bpf.c) and its loader
 * (cpu_profile.cc) share: the events in the ring buffer, the counters, the settings.
 * C, so that both clang -target bpf and the C++ loader read it. Fixed-width fields only,
 * laid out without padding holes, so both sides agree on every offset. */
#ifndef GPUPERF_EBPF_CPU_PROFILE_ABI_H_
#define GPUPERF_EBPF_CPU_PROFILE_ABI_H_

#ifdef __cplusplus
#include <cstdint>
#define GP_U64 std::uint64_t
#define GP_U32 std::uint32_t
#define GP_U16 std::uint16_t
#define GP_S32 std::int32_t
#else
#define GP_U64 __u64
#define GP_U32 __u32
#define GP_U16 __u16
#define GP_S32 __s32
#endif

/* Deepest stack kept per side (the kernel's perf_event_max_stack default). */
#define GP_MAX_STACK_DEPTH 127
/* Words copied from the top of the user stack: where the return address of a function
 * without a frame pointer lies, which the frame-pointer walk misses (cpu_recorder.cc). */
#define GP_STACK_TOP_WORDS 16

enum gp_event_kind {
  GP_EVENT_ON_CPU = 1,  /* a timer sample: a thread was running */
  GP_EVENT_OFF_CPU = 2, /* a thread was blocked (intervals in a row at one stack) */
  GP_EVENT_STACKS = 3,  /* the stacks that off-CPU events name by stack_id */
  GP_EVENT_EXEC = 4,    /* a followed process ran a new program: its maps changed */
};

/* Why a thread was off CPU, from the scheduler's view of it when it switched out. */
enum gp_off_cpu_reason {
  GP_OFF_CPU_OTHER = 0,
  GP_OFF_CPU_SLEEP = 1,           /* interruptible sleep: waits on a lock, I/O, a timer */
  GP_OFF_CPU_UNINTERRUPTIBLE = 2, /* uninterruptible: disk I/O, page faults, some locks */
  GP_OFF_CPU_PREEMPTED = 3,       /* runnable but descheduled: waited for a CPU */
};

/* Every event begins with this. */
struct gp_event_header {
  GP_U32 kind; /* gp_event_kind */
  GP_U32 pid;  /* thread group id */
  GP_U32 tid;
  GP_U32 cpu;
  GP_U64 time_ns; /* CLOCK_MONOTONIC: the sample, or the end of the off-CPU time */
};

/* A thread's kernel and user stacks, innermost PC first, as many as the depths say, and
 * the words at the top of its user stack (top_words of them: 0 when unreadable). */
struct gp_event_stacks {
  GP_U16 kernel_depth;
  GP_U16 user_depth;
  GP_U16 user_truncated; /* the user stack filled all GP_MAX_STACK_DEPTH slots */
  GP_U16 top_words;
  GP_U64 kernel_pcs[GP_MAX_STACK_DEPTH];
  GP_U64 user_pcs[GP_MAX_STACK_DEPTH];
  GP_U64 user_top[GP_STACK_TOP_WORDS];
};

/* Deepest Python frame chain kept per on-CPU sample (python_target.h). */
#define GP_MAX_PY_FRAMES 64

/* One Python frame of a sample, as src/inject/python/python_walk.h records it: the code
 * object's address, the instruction offset in code units, the owner byte and the entry
 * flag (GP_PY_ENTRY, set on the outermost frame of each native eval-loop call), and the
 * 8 bytes at gp_py_target.code_key in the code object when it was sampled: the recorder
 * names code objects later, when the address may hold another one. */
#define GP_PY_ENTRY 0x100
#define GP_PY_OWNER_MASK 0xff   /* flags: the frame's owner byte (3.11+) */
#define GP_PY_GENERATOR_OWNER 1 /* ... of a generator's or coroutine's frame */
struct gp_py_frame {
  GP_U64 code;
  GP_U32 instr_offset;
  GP_U32 flags;
  GP_U64 key;
};

/* What the Python walk of a sample found. */
enum gp_py_status {
  GP_PY_NONE = 0,      /* not a process with a known interpreter */
  GP_PY_OK = 1,        /* depth frames (0: the thread ran no Python code) */
  GP_PY_NO_THREAD = 2, /* no thread state of this thread (a native thread) */
  GP_PY_FAILED = 3,    /* a read failed: the frames so far are kept */
  GP_PY_TRUNCATED = 4, /* deeper than GP_MAX_PY_FRAMES */
};

/* Where one process's interpreter keeps its threads and frames (python_target.cc fills
 * it from the layouts of src/inject/python; the loader puts it in the py_targets map,
 * keyed by pid). Offsets in bytes, -1 when the version has no such field. */
enum gp_py_flavor {
  GP_PY_FRAME_OBJECTS = 0, /* 3.10: every frame is an entry */
  GP_PY_ENTRY_FLAG = 1,    /* 3.11: is_entry */
  GP_PY_SHIM_FRAMES = 2,   /* 3.12+: frames owned by the C stack separate eval calls */
};
struct gp_py_target {
  GP_U64 runtime;           /* &_PyRuntime in the process */
  GP_U64 code_pointer_mask; /* 3.14: f_executable is a tagged reference */
  GP_S32 interpreters_head; /* _PyRuntime.interpreters.head */
  GP_S32 threads_head;      /* PyInterpreterState.threads.head */
  GP_S32 tstate_next;
  GP_S32 tstate_native_thread_id;
  GP_S32 tstate_frame;         /* the frame pointer, or 3.11/3.12 the cframe pointer */
  GP_S32 cframe_current_frame; /* -1: tstate_frame points at the frame */
  GP_S32 frame_previous;
  GP_S32 frame_code;
  GP_S32 frame_instr;
  GP_S32 frame_owner;
  GP_S32 frame_is_entry;
  GP_S32 code_bytecode; /* 3.11+: co_code_adaptive, to make an instruction pointer an offset */
  GP_U32 flavor;        /* gp_py_flavor */
  GP_U32 shim_owner;
  GP_U32 instr_is_pointer;
  GP_S32 code_key; /* what tells code objects at one address apart: 3.12+ co_version, else
                      the name's address */
  /* The bytes of a frame the walk reads, in one read: from frame_base, frame_span of them
   * (at most GP_PY_FRAME_SPAN_MAX); the pointer fields 8-aligned from frame_base, lasti 4. */
  GP_S32 frame_base;
  GP_U32 frame_span;
  /* 3.10: no native thread id; tstate_thread_id (pthread_self) is compared with the
   * thread's TLS pointer instead, and tstate_native_thread_id is -1. */
  GP_S32 tstate_thread_id;
  GP_U32 reserved;
};
#define GP_PY_FRAME_SPAN_MAX 128

/* Bytes of the user stack an on-CPU sample copies from its stack pointer up, for the
 * recorder to unwind with each module's .eh_frame (perf --call-graph dwarf does the same,
 * 8 KiB by default). 16 KiB holds the whole stack of most native threads below the
 * event loop or main (frames are a few hundred bytes; a large local array is what stops a
 * walk early), costs ~1.2-1.6 us a sample to copy on the VM measured (8 KiB: ~0.4 us), and
 * makes an event ~18 KiB: the loader's ring is 32 MiB with copies, ~1,800 samples
 * (docs/cpu-profiling.md). */
#define GP_STACK_COPY_BYTES 16384
/* The interrupted user registers of a sample (the system call's saved ones for a sample
 * in the kernel) and `size` bytes of its stack from sp up: words[0] is the word at sp. 0
 * bytes: not copied (no user stack, or unwinding by frame pointers only). Less than
 * GP_STACK_COPY_BYTES: the stack ended before (the main thread's at mm->start_stack,
 * others at their last readable page). */
struct gp_user_stack_copy {
  GP_U64 ip;
  GP_U64 sp;
  GP_U64 bp;
  GP_U32 size;
  GP_U32 reserved;
  GP_U64 words[GP_STACK_COPY_BYTES / 8];
};

/* A thread's Python frames, where the events of processes with a known interpreter
 * (py_targets) carry them: at their end, so that events of other processes leave them out
 * (the *_NATIVE_SIZE below). */
struct gp_py_stack {
  GP_U16 status; /* gp_py_status */
  GP_U16 depth;
  GP_U32 reserved;
  struct gp_py_frame frames[GP_MAX_PY_FRAMES]; /* innermost first */
};

struct gp_on_cpu_event {
  struct gp_event_header header;
  GP_U64 weight_ns; /* CPU time this sample stands for: the sampling period */
  struct gp_event_stacks stacks;
  struct gp_user_stack_copy user_stack;
  struct gp_py_stack py;
};
#define GP_ON_CPU_EVENT_NATIVE_SIZE __builtin_offsetof(struct gp_on_cpu_event, py)

/* The stacks of a thread where it switched out, sent once: off-CPU events name them by
 * stack_id (unique in one run of the programs). Always in the ring buffer before the
 * first off-CPU event that names them. */
struct gp_stacks_event {
  struct gp_event_header header;
  GP_U64 stack_id;
  struct gp_event_stacks stacks;
  struct gp_py_stack py;
};
#define GP_STACKS_EVENT_NATIVE_SIZE __builtin_offsetof(struct gp_stacks_event, py)

/* Off-CPU time of one thread: `count` intervals in a row between start_ns and
 * header.time_ns, blocked at the same stacks for the same reason, blocked_ns in all
 * (the on-CPU time between them excluded). stack_id 0: the stacks were not taken (the
 * ring buffer was full). */
struct gp_off_cpu_event {
  struct gp_event_header header;
  GP_U64 start_ns;
  GP_U64 blocked_ns;
  GP_U64 stack_id;
  GP_U32 count;
  GP_U32 reason; /* gp_off_cpu_reason */
};

/* Counters the programs keep (a per-CPU array indexed by these). Nothing on the path of
 * every context switch counts: the loader adds up intervals from the events. */
enum gp_counter {
  GP_COUNT_ON_CPU_SAMPLES = 0,
  GP_COUNT_RINGBUF_FULL = 1, /* events lost: the ring buffer had no room */
  GP_COUNT_KERNEL_STACK_FAILED = 2,
  GP_COUNT_USER_STACK_FAILED = 3,
  GP_COUNT_USER_STACK_TRUNCATED = 4,
  GP_COUNT_STACK_WALKS = 5,           /* off-CPU switch-outs whose stacks were walked */
  GP_COUNT_REUSE_CHECKS = 6,          /* reuses walked anyway, to check the fingerprint */
  GP_COUNT_REUSE_MISMATCHES = 7,      /* ... and found other stacks than the reused ones */
  GP_COUNT_THREAD_STATE_FAILED = 8,   /* switch-outs not timed: no per-thread state */
  GP_COUNT_PROCESSES_FOLLOWED = 9,    /* children added to the filter at fork */
  GP_COUNT_STACKS_SENT = 10,          /* distinct off-CPU stacks sent */
  GP_COUNT_PREEMPTIONS_UNWALKED = 11, /* involuntary switch-outs timed without stacks */
  GP_COUNT_CLOCK_BACKWARDS = 12,      /* intervals not timed: switched in "before" out */
  GP_COUNT_PY_WALKED = 13,            /* samples with a Python walk that read its frames */
  GP_COUNT_PY_FAILED = 14,            /* ... that failed at a read */
  GP_COUNT_PY_TRUNCATED = 15,         /* ... that went past GP_MAX_PY_FRAMES */
  GP_COUNT_STACK_COPY_FAILED = 16,    /* on-CPU samples whose user stack could not be copied */
  /* Context switches the sched_switch tracepoint did not bring (seen while another program
   * attached to it or detached): */
  GP_COUNT_SWITCH_INS_REPAIRED = 17, /* switches in timed by the scheduler's own record */
  GP_COUNT_SWITCHES_MISSED = 18,     /* off-CPU intervals lost or cut short by one */
  GP_COUNTERS = 19,
};

#endif /* GPUPERF_EBPF_CPU_PROFILE_ABI_H_ */
