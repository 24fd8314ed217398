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
#else
#define GP_U64 __u64
#define GP_U32 __u32
#define GP_U16 __u16
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

struct gp_on_cpu_event {
  struct gp_event_header header;
  GP_U64 weight_ns; /* CPU time this sample stands for: the sampling period */
  struct gp_event_stacks stacks;
};

/* The stacks of a thread where it switched out, sent once: off-CPU events name them by
 * stack_id (unique in one run of the programs). Always in the ring buffer before the
 * first off-CPU event that names them. */
struct gp_stacks_event {
  struct gp_event_header header;
  GP_U64 stack_id;
  struct gp_event_stacks stacks;
};

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
  GP_COUNTERS = 13,
};

#endif /* GPUPERF_EBPF_CPU_PROFILE_ABI_H_ */
