// SPDX-License-Identifier: GPL-2.0
/* The CPU side of `gpuperf record --cpu/--off-cpu`, in the kernel.
 *
 *  - on_cpu_sample (perf_event, a cpu-clock timer on every CPU): one event per tick that
 *    lands on a followed process, with its kernel and user stacks, weighted by the
 *    sampling period; for Python processes (py_targets), the thread's Python frames too.
 *  - on_switch (tp_btf/sched_switch): a thread that switches out notes when and why (its
 *    state) and where (its stacks); when it switches back in, the interval joins the
 *    pending run of intervals at those stacks, sent as one event when the run is full,
 *    falls apart, or its thread exits (on_exit).
 *  - on_fork (tp_btf/sched_process_fork): children of followed processes are followed;
 *    on_exec (tp_btf/sched_process_exec) tells the loader their memory maps changed.
 *
 * What makes off-CPU time affordable for programs that switch 100k times a second: a
 * kernel stack walk costs ~3 us and a user one ~1.5 us (measured with bpf_stats), so
 * stacks are sent once (a stacks event with a run-unique id) and reused while the thread
 * blocks where it blocked before, recognized without walking by where it entered the
 * kernel (instruction, stack pointer, system call); one reuse in 256 is walked anyway
 * and counted if that recognition was wrong. Intervals at one stack travel as one event.
 * The path every context switch takes counts nothing and sends nothing. Everything goes
 * through one ring buffer, submitted without wakeups: the loader drains it on a timer. */
#include "ebpf/kernel_types.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "ebpf/cpu_profile_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* Settings, fixed before load. */
const volatile __u32 follow_all = 0;   /* --system: every process but our own */
const volatile __u32 own_pid = 0;      /* gpuperf record itself */
const volatile __u32 reuse_stacks = 1; /* skip the off-CPU stack walk when registers match */
/* Off-CPU time of kernel threads (--system only: followed processes have none). */
const volatile __u32 include_kernel_threads = 0;
/* Intervals of a thread at the same stacks merge while the on-CPU time between them stays
 * under merge_gap_ns and the run spans less than merge_span_ns. */
const volatile __u64 merge_gap_ns = 1000000;
const volatile __u64 merge_span_ns = 20000000;
/* Time context switches by the run queue's clock, which the scheduler has just read,
 * where the kernel has it (switch_clock); 0: bpf_ktime_get_ns, ~80 ns a call in the VMs
 * measured (docs/cpu-profiling.md). */
const volatile __u32 use_rq_clock = 1;
/* On-CPU samples copy the top of the user stack for the recorder's .eh_frame unwinder; 0:
 * frame pointers only (GPUPERF_CPU_UNWIND=fp). */
const volatile __u32 copy_user_stacks = 1;

/* Run-unique ids of the stacks events; 0 means none. */
__u64 next_stack_id = 1;

/* Followed processes: one bit per thread group id (pid_max is at most 2^22), in global
 * memory the loader writes through its mmap of .bss: the test on every context switch is a
 * load, not a map lookup. The loader sets the recorded command's bit; forks set their
 * children's. */
#define GP_PID_LIMIT (1u << 22)
__u64 followed_pids[GP_PID_LIMIT / 64];
/* Followed processes with a layout in py_targets, the same way: the switch program looks
 * that map up only for them. */
__u64 python_pids[GP_PID_LIMIT / 64];

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 8 << 20); /* the loader may resize it */
} events SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, GP_COUNTERS);
  __type(key, __u32);
  __type(value, __u64);
} counters SEC(".maps");

/* Stacks a thread sent, recognized by where it entered the kernel, with the pending run
 * of off-CPU intervals spent there. */
#define GP_STACK_SLOTS 4
#define GP_STACKLESS_SLOT GP_STACK_SLOTS /* preemptions whose stacks were not walked */
#define GP_NO_SLOT 0xff
#define GP_CHECK_EVERY 256
#define GP_SEEN_IN (1ull << 63) /* thread_state.arrivals: counted at a switch in */
struct stack_slot {
  __u64 hash;     /* of the stacks */
  __u64 stack_id; /* 0: slot unused */
  __u64 run_start_ns;
  __u64 run_end_ns;
  __u64 run_blocked_ns;
  __u32 run_count; /* 0: no pending run */
  __u32 run_reason;
};

/* What every switch of a thread reads comes first and fits in one cache line (the switch
 * out and the switch back in often run on different CPUs); a slot is touched only when an
 * interval joins its run. Times are in the switch clock (switch_clock()). */
struct thread_state {
  __u64 out_ns; /* when it switched out; 0 while it runs or when not timed */
  __u16 out_slot;
  __u16 out_reason;
  __u16 next_slot; /* the slot new stacks take */
  __u16 reuses;    /* wraps at a multiple of GP_CHECK_EVERY */
  __u64 keys[GP_STACK_SLOTS]; /* reuse_key_of() of each slot's walked stacks; 0: none */
  /* The scheduler's count of the thread's turns on a CPU (sched_info.pcount) at its last
   * switch out, or, with GP_SEEN_IN, at its last switch in: how switches the tracepoint did
   * not bring are found (switch_out, switch_in). */
  __u64 arrivals;
  struct stack_slot slots[GP_STACK_SLOTS + 1];
};

struct {
  __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct thread_state);
} threads SEC(".maps");

/* Per CPU: CLOCK_MONOTONIC minus the run queue's clock, measured where both are fresh (at a
 * context switch that sends an event); the times in events are CLOCK_MONOTONIC. */
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64);
} clock_offsets SEC(".maps");

/* Python processes whose interpreter's layout the loader found (python_target.h). */
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, __u32);
  __type(value, struct gp_py_target);
} py_targets SEC(".maps");

/* Each Python thread's PyThreadState, found by walking the interpreter's thread list;
 * checked against the thread id on every use (a freed one may be reused). */
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32);
  __type(value, __u64);
} py_thread_states SEC(".maps");

/* One frame's bytes, read at once (gp_py_target.frame_base/frame_span), per CPU. */
union py_frame_bytes {
  __u8 u8[2 * GP_PY_FRAME_SPAN_MAX];
  __u32 u32[GP_PY_FRAME_SPAN_MAX / 2];
  __u64 u64[GP_PY_FRAME_SPAN_MAX / 4];
};
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, union py_frame_bytes);
} py_frame_scratch SEC(".maps");

static __always_inline void count(__u32 which) {
  __u64* value = bpf_map_lookup_elem(&counters, &which);
  if (value) *value += 1;
}

/* The word of followed_pids that holds a pid's bit, bounded where the verifier sees it (the
 * compiler would otherwise fold the mask into the shifts of the 64-bit value it came from). */
static __always_inline __u64 pid_word(__u32 tgid) {
  __u64 word = tgid / 64;
  asm volatile("%[word] &= 0xffff" : [word] "+r"(word));
  return word;
}

static __always_inline int followed(__u32 tgid) {
  if (tgid == 0) return 0;
  if (follow_all) return tgid != own_pid;
  if (tgid >= GP_PID_LIMIT) return 0;
  return (followed_pids[pid_word(tgid)] >> (tgid % 64)) & 1;
}

/* The layout of a followed process's interpreter, for the switch program (the sample
 * program looks py_targets up for every sample). */
static __always_inline const struct gp_py_target* python_of(__u32 tgid) {
  if (tgid == 0 || tgid >= GP_PID_LIMIT) return 0;
  if (!((python_pids[pid_word(tgid)] >> (tgid % 64)) & 1)) return 0;
  return bpf_map_lookup_elem(&py_targets, &tgid);
}

/* Fills the kernel and user stacks of the current task. */
static __always_inline void take_stacks(void* ctx, struct gp_event_stacks* stacks) {
  long kernel = bpf_get_stack(ctx, stacks->kernel_pcs, sizeof(stacks->kernel_pcs), 0);
  if (kernel < 0) {
    count(GP_COUNT_KERNEL_STACK_FAILED);
    kernel = 0;
  }
  long user = bpf_get_stack(ctx, stacks->user_pcs, sizeof(stacks->user_pcs), BPF_F_USER_STACK);
  if (user < 0) {
    count(GP_COUNT_USER_STACK_FAILED);
    user = 0;
  }
  stacks->kernel_depth = kernel / sizeof(__u64);
  stacks->user_depth = user / sizeof(__u64);
  stacks->user_truncated = stacks->user_depth >= GP_MAX_STACK_DEPTH;
  if (stacks->user_truncated) count(GP_COUNT_USER_STACK_TRUNCATED);
  /* The top of the user stack, from the user registers the kernel saved on entry (the
   * interrupted ones for a sample in user mode, the system call's otherwise). */
  stacks->top_words = 0;
  if (user > 0) {
    struct pt_regs___kernel* regs = (void*)bpf_task_pt_regs(bpf_get_current_task_btf());
    __u64 sp = regs ? regs->sp : 0;
    if (sp != 0 &&
        bpf_probe_read_user(stacks->user_top, sizeof(stacks->user_top), (void*)sp) == 0) {
      stacks->top_words = GP_STACK_TOP_WORDS;
    }
  }
}

static __always_inline void fill_header(struct gp_event_header* h, __u32 kind, __u32 pid,
                                        __u32 tid, __u64 time_ns) {
  h->kind = kind;
  h->pid = pid;
  h->tid = tid;
  h->cpu = bpf_get_smp_processor_id();
  h->time_ns = time_ns;
}

/* A pointer-sized field of another process's memory; 0 when unreadable. */
static __always_inline __u64 read_user_u64(__u64 base, __s32 offset) {
  __u64 value = 0;
  if (bpf_probe_read_user(&value, sizeof(value), (const void*)(base + offset)) != 0) return 0;
  return value;
}

#define GP_PY_MAX_THREADS 64 /* threads of one interpreter looked through */
#define GP_PY_MAX_STEPS 96   /* links followed: frames and the shims between them */

/* The current thread's TLS pointer (what pthread_self() returns), or 0. */
static __always_inline __u64 thread_pointer(void) {
#if defined(__TARGET_ARCH_x86)
  struct task_struct___tls* task = (void*)bpf_get_current_task_btf();
  return BPF_CORE_READ(task, thread.fsbase);
#elif defined(__TARGET_ARCH_arm64)
  struct task_struct___tls_arm64* task = (void*)bpf_get_current_task_btf();
  return BPF_CORE_READ(task, thread.uw.tp_value);
#else
  return 0;
#endif
}

/* The current thread's PyThreadState in the process's main interpreter, or 0. A thread
 * state names its thread by native id (3.11+), else (3.10) by its pthread_self(). */
static __always_inline __u64 py_thread_state(const struct gp_py_target* t, __u32 tid) {
  const bool by_pointer = t->tstate_native_thread_id < 0;
  const __s32 id_at = by_pointer ? t->tstate_thread_id : t->tstate_native_thread_id;
  const __u64 id = by_pointer ? thread_pointer() : tid;
  if (id == 0) return 0;
  __u64* cached = bpf_map_lookup_elem(&py_thread_states, &tid);
  if (cached && *cached != 0 && read_user_u64(*cached, id_at) == id) return *cached;
  __u64 interp = read_user_u64(t->runtime, t->interpreters_head);
  if (interp == 0) return 0;
  __u64 tstate = read_user_u64(interp, t->threads_head);
  for (int i = 0; i < GP_PY_MAX_THREADS; i++) {
    if (tstate == 0 || (tstate & 7) != 0) return 0;
    if (read_user_u64(tstate, id_at) == id) {
      bpf_map_update_elem(&py_thread_states, &tid, &tstate, BPF_ANY);
      return tstate;
    }
    tstate = read_user_u64(tstate, t->tstate_next);
  }
  return 0;
}

/* Where a walk of the current thread's Python frames begins: its innermost frame (0: none
 * runs) in *frame, and the per-CPU bytes a frame is read into. NULL: a thread without a
 * Python thread state. */
static __always_inline union py_frame_bytes* py_walk_start(const struct gp_py_target* t,
                                                           __u32 tid, __u64* frame) {
  __u64 tstate = py_thread_state(t, tid);
  if (tstate == 0) return 0;
  *frame = read_user_u64(tstate, t->tstate_frame);
  if (t->cframe_current_frame >= 0 && *frame != 0) {
    *frame = read_user_u64(*frame, t->cframe_current_frame);
  }
  __u32 zero = 0;
  return bpf_map_lookup_elem(&py_frame_scratch, &zero);
}

/* Walks the current thread's Python frames into `py`, innermost first, flagged as
 * src/inject/python/python_walk.cc flags them (the entry frames included), so the
 * recorder turns them into the same stack words as launch stacks.
 *
 * A global function: the verifier checks it once, not once for each program that walks
 * (on-CPU samples, off-CPU stacks), whose own paths it would multiply.
 *
 * The count of frames so far lives in the event (depth), read back each step through a
 * volatile load: the verifier then sees an unknown count at the top of every step, so the
 * paths through one step (a shim, a frame, a frame without code) meet in one state there
 * instead of multiplying over the 96 steps. */
__noinline int walk_python(struct gp_py_stack* py, const struct gp_py_target* t, __u32 tid) {
  if (!py || !t) return 0;
  volatile __u16* depth = &py->depth;
  *depth = 0;
  py->status = GP_PY_NO_THREAD;
  __u64 frame = 0;
  union py_frame_bytes* bytes = py_walk_start(t, tid, &frame);
  if (!bytes) return 0;
  count(GP_COUNT_PY_WALKED);
  py->status = GP_PY_OK;
  /* Where the fields are in the bytes read: the pointers in 8-byte words, lasti in 4. */
  const __u32 span = t->frame_span & (GP_PY_FRAME_SPAN_MAX - 1);
  const __u32 previous_at = ((__u32)(t->frame_previous - t->frame_base) / 8) & 31;
  const __u32 code_at = ((__u32)(t->frame_code - t->frame_base) / 8) & 31;
  const __u32 instr_at = (__u32)(t->frame_instr - t->frame_base) & 127;
  const __u32 owner_at = (__u32)(t->frame_owner - t->frame_base) & 127;
  const __u32 entry_at = (__u32)(t->frame_is_entry - t->frame_base) & 127;
  for (int step = 0; step < GP_PY_MAX_STEPS; step++) {
    if (frame == 0) return 0;
    __u32 n = *depth;
    if (n >= GP_MAX_PY_FRAMES) break;
    if ((frame & 7) != 0 || span == 0 ||
        bpf_probe_read_user(bytes, span, (const void*)(frame + t->frame_base))) {
      py->status = GP_PY_FAILED;
      count(GP_COUNT_PY_FAILED);
      return 0;
    }
    __u64 previous = bytes->u64[previous_at];
    __u32 flags = t->flavor == GP_PY_FRAME_OBJECTS ? GP_PY_ENTRY : 0;
    if (t->flavor != GP_PY_FRAME_OBJECTS) {
      __u8 owner = bytes->u8[owner_at];
      if (t->flavor == GP_PY_SHIM_FRAMES) {
        if ((__s8)owner >= (__s8)t->shim_owner) { /* an entry shim: the frame before began */
          if (n > 0) py->frames[(n - 1) & (GP_MAX_PY_FRAMES - 1)].flags |= GP_PY_ENTRY;
          frame = previous;
          continue;
        }
        flags = owner;
      } else {
        flags = owner | (bytes->u8[entry_at] ? GP_PY_ENTRY : 0);
      }
    }
    __u64 code = bytes->u64[code_at] & t->code_pointer_mask;
    __u32 offset = 0xffffffffu;
    if (code != 0 && t->instr_is_pointer) {
      /* Before the bytecode (a frame that has not started) gives -1: kPyNoInstruction. */
      __s64 units = (__s64)(bytes->u64[(instr_at / 8) & 31] - code) - t->code_bytecode;
      offset = (__u32)(units >> 1);
    } else if (code != 0) {
      __s32 lasti = (__s32)bytes->u32[(instr_at / 4) & 63];
      if (lasti >= 0) offset = (__u32)lasti;
    }
    frame = previous;
    if (code == 0) continue;
    struct gp_py_frame* out = &py->frames[n & (GP_MAX_PY_FRAMES - 1)];
    out->code = code;
    out->instr_offset = offset;
    out->flags = flags;
    out->key = read_user_u64(code, t->code_key);
    *depth = n + 1;
  }
  if (frame != 0) {
    py->status = GP_PY_TRUNCATED;
    count(GP_COUNT_PY_TRUNCATED);
  }
  return 0;
}

#define GP_PY_KEY_FRAMES 4 /* Python frames a switch-out's reuse key reads */

/* What tells a Python thread's stacks apart without walking them: the addresses and
 * instruction words of its innermost frames. The native registers of reuse_key_of cannot:
 * one helper (a sleep, a synchronize) called from two lines of one function blocks at the
 * same instruction and stack pointer, the interpreter's C stack being the same for both
 * since 3.11. Frames further out can still differ unseen; the check of one reuse in
 * GP_CHECK_EVERY, which walks the Python frames too, counts it when they do. 0: no
 * Python frames read. */
static __always_inline __u64 py_reuse_key(const struct gp_py_target* t, __u32 tid) {
  __u64 frame = 0;
  union py_frame_bytes* bytes = py_walk_start(t, tid, &frame);
  if (!bytes) return 0;
  const __u32 span = t->frame_span & (GP_PY_FRAME_SPAN_MAX - 1);
  const __u32 previous_at = ((__u32)(t->frame_previous - t->frame_base) / 8) & 31;
  const __u32 instr_at = ((__u32)(t->frame_instr - t->frame_base) / 8) & 31;
  __u64 h = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < GP_PY_KEY_FRAMES; i++) {
    if (frame == 0 || (frame & 7) != 0 || span == 0 ||
        bpf_probe_read_user(bytes, span, (const void*)(frame + t->frame_base))) {
      break;
    }
    h = (h ^ frame ^ (bytes->u64[instr_at] << 1)) * 0x100000001B3ull;
    frame = bytes->u64[previous_at];
  }
  return h;
}

/* Folds walked Python frames into a stacks hash (stacks_hash). */
static __always_inline __u64 py_stack_hash(__u64 h, const struct gp_py_stack* py) {
  const __u32 depth = py->depth;
  for (int i = 0; i < GP_MAX_PY_FRAMES; i++) {
    if (i >= depth) break;
    const struct gp_py_frame* f = &py->frames[i];
    h = (h ^ f->code ^ ((__u64)f->instr_offset << 32 | f->flags)) * 0x100000001B3ull;
  }
  return h ^ py->status;
}

/* Reads `size` bytes (at most GP_STACK_COPY_BYTES) of the user stack from sp into the copy;
 * false when any of them is unmapped (the helper then fails for all of them). */
static __always_inline bool read_stack(struct gp_user_stack_copy* c, __u64 sp, __u64 size) {
  asm volatile("%[size] &= 0x7fff" : [size] "+r"(size)); /* a bound the verifier sees */
  if (size > GP_STACK_COPY_BYTES) size = GP_STACK_COPY_BYTES;
  return bpf_probe_read_user(c->words, size, (const void*)sp) == 0;
}

#define GP_PAGE 4096
/* Copies the interrupted user registers and GP_STACK_COPY_BYTES of the user stack above
 * sp into the sample. The main thread's stack ends at the top of its mapping, often less
 * than that above sp: its frames end at mm->start_stack (argc; argv and the environment
 * lie above), so its copy stops there (without, the first read fails as a whole and the
 * bisection below costs ~1.5 us more per sample, measured). Where another stack ends
 * sooner, the readable part ends on a page boundary: the copy is the longest of sp's page
 * plus n whole pages that reads, found by bisecting n (at most 4 pages: 3 more reads, and
 * one to read the winner again). */
static __always_inline void copy_user_stack(struct gp_user_stack_copy* c) {
  c->size = 0;
  if (!copy_user_stacks) return;
  struct pt_regs___kernel* regs = (void*)bpf_task_pt_regs(bpf_get_current_task_btf());
  if (!regs || regs->sp == 0) {
    count(GP_COUNT_STACK_COPY_FAILED);
    return;
  }
  const __u64 sp = regs->sp;
  c->ip = regs->ip;
  c->sp = sp;
  c->bp = regs->bp;
  struct task_struct___mm* task = (void*)bpf_get_current_task_btf();
  const __u64 start_stack = BPF_CORE_READ(task, mm, start_stack);
  if (start_stack > sp && start_stack - sp < GP_STACK_COPY_BYTES) {
    const __u64 size = start_stack - sp + 8; /* with argc */
    if (read_stack(c, sp, size)) {
      c->size = (__u32)size;
      return;
    }
  }
  if (read_stack(c, sp, GP_STACK_COPY_BYTES)) {
    c->size = GP_STACK_COPY_BYTES;
    return;
  }
  const __u64 head = GP_PAGE - (sp & (GP_PAGE - 1)); /* the rest of sp's page */
  /* Sizes head + (n - 1) pages: n = lo reads (0: none known to), n = hi does not. Unsigned
   * (BPF has no signed division). */
  __u32 lo = 0;
  __u32 hi = (__u32)((GP_STACK_COPY_BYTES - head + GP_PAGE - 1) / GP_PAGE) + 1;
  bool last_read_lo = false;
  for (int step = 0; step < 3; step++) {
    if (hi - lo <= 1) break;
    const __u32 mid = (lo + hi) / 2; /* >= 1 */
    if (read_stack(c, sp, head + (__u64)(mid - 1) * GP_PAGE)) {
      lo = mid;
      last_read_lo = true;
    } else {
      hi = mid;
      last_read_lo = false;
    }
  }
  if (lo == 0) {
    count(GP_COUNT_STACK_COPY_FAILED);
    return;
  }
  const __u64 size = head + (__u64)(lo - 1) * GP_PAGE;
  if (!last_read_lo && !read_stack(c, sp, size)) {
    count(GP_COUNT_STACK_COPY_FAILED);
    return;
  }
  c->size = (__u32)(size < GP_STACK_COPY_BYTES ? size : GP_STACK_COPY_BYTES);
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data* ctx) {
  __u64 id = bpf_get_current_pid_tgid();
  __u32 tgid = id >> 32;
  __u32 tid = (__u32)id;
  if (tid == 0 || !followed(tgid)) return 0; /* idle, or not ours */
  /* Samples of other processes leave out the Python frames' room (1.5 KB). */
  const struct gp_py_target* python = bpf_map_lookup_elem(&py_targets, &tgid);
  struct gp_on_cpu_event* e =
      python ? bpf_ringbuf_reserve(&events, sizeof(*e), 0)
             : bpf_ringbuf_reserve(&events, GP_ON_CPU_EVENT_NATIVE_SIZE, 0);
  if (!e) {
    count(GP_COUNT_RINGBUF_FULL);
    return 0;
  }
  fill_header(&e->header, GP_EVENT_ON_CPU, tgid, tid, bpf_ktime_get_ns());
  e->weight_ns = ctx->sample_period;
  take_stacks(ctx, &e->stacks);
  e->user_stack.size = 0;
  if (e->stacks.user_depth > 0) copy_user_stack(&e->user_stack); /* none: a kernel thread */
  if (python) walk_python(&e->py, python, tid);
  bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
  count(GP_COUNT_ON_CPU_SAMPLES);
  return 0;
}

static __always_inline __u32 off_cpu_reason(bool preempt, struct task_struct* task) {
  if (preempt) return GP_OFF_CPU_PREEMPTED;
  unsigned int state;
  if (bpf_core_field_exists(task->__state)) {
    state = task->__state;
  } else {
    struct task_struct___before_5_14* old = (void*)task;
    state = (unsigned int)BPF_CORE_READ(old, state);
  }
  if (state == GP_TASK_RUNNING) return GP_OFF_CPU_PREEMPTED; /* yielded, still runnable */
  if (state & GP_TASK_INTERRUPTIBLE) return GP_OFF_CPU_SLEEP;
  if (state & GP_TASK_UNINTERRUPTIBLE) return GP_OFF_CPU_UNINTERRUPTIBLE;
  return GP_OFF_CPU_OTHER;
}

/* Where the thread entered the kernel: instruction, stack pointer and system call of its
 * saved user registers. The same as when a slot's stacks were walked means the thread
 * blocks at the same place at the same depth, almost always reached the same way (the
 * frame pointer and the top of the stack would tell more, but in code without frame
 * pointers they hold loop variables that change every time). 0: unknown. */
static __always_inline __u64 reuse_key_of(struct task_struct* task) {
  struct pt_regs___kernel* regs = (void*)bpf_task_pt_regs(task);
  if (!regs) return 0;
  __u64 h = regs->ip * 0x9E3779B97F4A7C15ull;
  h = (h ^ (h >> 29) ^ regs->sp) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 31) ^ regs->orig_ax) * 0x94D049BB133111EBull;
  h ^= h >> 29;
  return h ? h : 1;
}

static __always_inline __u64 stacks_hash(const struct gp_event_stacks* s) {
  __u64 h = ((__u64)s->kernel_depth << 16 | s->user_depth) * 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < GP_MAX_STACK_DEPTH; i++) {
    if (i >= s->kernel_depth) break;
    h = (h ^ s->kernel_pcs[i]) * 0x100000001B3ull;
  }
  for (int i = 0; i < GP_MAX_STACK_DEPTH; i++) {
    if (i >= s->user_depth) break;
    h = (h ^ s->user_pcs[i]) * 0x100000001B3ull;
  }
  return h;
}

/* Whether switch_clock reads the run queue's clock: decided when the programs load. */
static __always_inline bool rq_clock_used(void) {
  return use_rq_clock && bpf_core_field_exists(struct task_struct, se) &&
         bpf_core_field_exists(struct sched_entity, cfs_rq) &&
         bpf_core_field_exists(struct cfs_rq, rq) && bpf_core_field_exists(struct rq, clock);
}

/* The switch clock: the clock of the run queue of `task` (a task on this CPU) when
 * rq_clock_used(), else CLOCK_MONOTONIC. */
static __always_inline __u64 switch_clock(struct task_struct* task) {
  if (!rq_clock_used()) return bpf_ktime_get_ns();
  return task->se.cfs_rq->rq->clock; /* BTF pointers: plain loads, checked by the kernel */
}

/* CLOCK_MONOTONIC minus the switch clock on this CPU. `fresh`: the switch clock was just
 * read at a context switch, so the offset can be measured now; else (a thread's exit) the
 * last one measured on this CPU is used. */
static __always_inline __u64 clock_offset(struct task_struct* task, bool fresh) {
  if (!rq_clock_used()) return 0;
  __u32 zero = 0;
  __u64* offset = bpf_map_lookup_elem(&clock_offsets, &zero);
  if (!offset) return 0;
  if (fresh || *offset == 0) *offset = bpf_ktime_get_ns() - switch_clock(task);
  return *offset;
}

/* Sends the pending run of a slot and forgets it. */
static __always_inline void send_run(struct task_struct* task, struct stack_slot* slot,
                                     bool fresh) {
  if (slot->run_count == 0) return;
  struct gp_off_cpu_event* e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e) {
    count(GP_COUNT_RINGBUF_FULL);
  } else {
    const __u64 offset = clock_offset(task, fresh);
    fill_header(&e->header, GP_EVENT_OFF_CPU, task->tgid, task->pid, slot->run_end_ns + offset);
    e->start_ns = slot->run_start_ns + offset;
    e->blocked_ns = slot->run_blocked_ns;
    e->stack_id = slot->stack_id;
    e->count = slot->run_count;
    e->reason = slot->run_reason;
    bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
  }
  slot->run_count = 0;
}

/* Sends every pending run of a thread (it exits, or profiling stops). */
static __always_inline void send_runs(struct task_struct* task, struct thread_state* s) {
  for (__u32 i = 0; i <= GP_STACKLESS_SLOT; i++) send_run(task, &s->slots[i], false);
}

/* Walks the current thread's stacks (and Python frames, in a process with a known
 * interpreter) and finds or makes the slot that holds them. */
static __always_inline __u32 walk_to_slot(void* ctx, struct task_struct* task,
                                          struct thread_state* s, __u64 key, __u64 now,
                                          const struct gp_py_target* python) {
  count(GP_COUNT_STACK_WALKS);
  struct gp_stacks_event* e = python
                                  ? bpf_ringbuf_reserve(&events, sizeof(*e), 0)
                                  : bpf_ringbuf_reserve(&events, GP_STACKS_EVENT_NATIVE_SIZE, 0);
  if (!e) {
    count(GP_COUNT_RINGBUF_FULL);
    return GP_NO_SLOT;
  }
  take_stacks(ctx, &e->stacks);
  __u64 hash = stacks_hash(&e->stacks); /* the top words hold locals: not part of it */
  if (python) {
    walk_python(&e->py, python, task->pid);
    hash = py_stack_hash(hash, &e->py);
  }
  for (__u32 i = 0; i < GP_STACK_SLOTS; i++) {
    if (s->slots[i].stack_id != 0 && s->slots[i].hash == hash) {
      bpf_ringbuf_discard(e, BPF_RB_NO_WAKEUP); /* sent before */
      s->keys[i] = key;
      return i;
    }
  }
  __u32 i = s->next_slot % GP_STACK_SLOTS;
  s->next_slot = i + 1;
  struct stack_slot* slot = &s->slots[i];
  send_run(task, slot, true);
  s->keys[i] = key;
  slot->hash = hash;
  slot->stack_id = __sync_fetch_and_add(&next_stack_id, 1);
  fill_header(&e->header, GP_EVENT_STACKS, task->tgid, task->pid,
              now + clock_offset(task, true));
  e->stack_id = slot->stack_id;
  bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
  count(GP_COUNT_STACKS_SENT);
  return i;
}

/* The slot of the stacks the current thread switches out at. A thread preempted where it
 * was not before (an involuntary switch, wherever it was running: the on-CPU samples say
 * where that is) is timed without walking its stacks. One place walks (walk_to_slot), so
 * that the verifier sees the walks once. */
static __always_inline __u32 slot_of(void* ctx, struct task_struct* task, struct thread_state* s,
                                     __u64 now, bool preempt) {
  const struct gp_py_target* python = python_of(task->tgid);
  __u64 key = reuse_stacks ? reuse_key_of(task) : 0;
  if (key != 0 && python) key = (key ^ py_reuse_key(python, task->pid)) | 1;
  __u32 checked = GP_NO_SLOT;
  if (key != 0) {
    for (__u32 i = 0; i < GP_STACK_SLOTS; i++) {
      if (s->keys[i] != key) continue; /* a key is set only with the slot's stacks */
      if (++s->reuses % GP_CHECK_EVERY != 0) return i;
      count(GP_COUNT_REUSE_CHECKS);
      checked = i;
      break;
    }
  }
  if (checked == GP_NO_SLOT && preempt) {
    count(GP_COUNT_PREEMPTIONS_UNWALKED);
    return GP_STACKLESS_SLOT;
  }
  __u32 walked = walk_to_slot(ctx, task, s, key, now, python);
  if (checked != GP_NO_SLOT && walked != checked) {
    count(GP_COUNT_REUSE_MISMATCHES);
    s->keys[checked & (GP_STACK_SLOTS - 1)] = 0;
  }
  return walked;
}

/* Joins the interval [start, now) to the slot's pending run, or sends that run and starts
 * another. `fresh`: as for clock_offset. */
static __always_inline void add_interval(struct task_struct* task, struct stack_slot* slot,
                                         __u64 start, __u64 now, __u32 reason, bool fresh) {
  if (slot->run_count != 0 && slot->run_reason == reason &&
      start - slot->run_end_ns <= merge_gap_ns && now - slot->run_start_ns <= merge_span_ns) {
    slot->run_end_ns = now;
    slot->run_blocked_ns += now - start;
    slot->run_count += 1;
    return;
  }
  send_run(task, slot, fresh);
  slot->run_start_ns = start;
  slot->run_end_ns = now;
  slot->run_blocked_ns = now - start;
  slot->run_reason = reason;
  slot->run_count = 1;
}

/* How many turns on a CPU the scheduler counted for `task`; 0 where it keeps none. */
static __always_inline __u64 arrivals_of(struct task_struct* task) {
  if (!bpf_core_field_exists(task->sched_info.pcount)) return 0;
  return task->sched_info.pcount;
}

/* When the present turn on a CPU of `task` (a task on this CPU) began, by the scheduler's own
 * record, in the switch clock; 0: unknown. `now`: the switch clock, just read. */
static __always_inline __u64 last_arrival_of(struct task_struct* task, __u64 now) {
  if (!bpf_core_field_exists(task->sched_info.last_arrival) ||
      !bpf_core_field_exists(struct rq, clock)) {
    return 0;
  }
  const __u64 arrival = task->sched_info.last_arrival; /* in the run queue's clock */
  if (arrival == 0 || rq_clock_used()) return arrival;
  return arrival + (now - task->se.cfs_rq->rq->clock); /* CLOCK_MONOTONIC less rq clock */
}

/* The tracepoint did not bring the switch in that ended the interval begun at out_ns (seen
 * while another program attached to sched_switch or detached: ~1 run in 10 of a test with
 * 24 waits lost one). Where the thread had one turn on a CPU since (`turns`, by the
 * scheduler's count), the scheduler noted when it began, which ends the interval. */
static __always_inline bool time_missed_switch_in(struct task_struct* task,
                                                  struct thread_state* s, __u64 turns,
                                                  __u64 now) {
  const __u64 start = s->out_ns;
  const __u32 i = s->out_slot;
  s->out_ns = 0;
  const __u64 end = turns == 1 ? last_arrival_of(task, now) : 0;
  if (i > GP_STACKLESS_SLOT || end <= start || end > now) {
    count(GP_COUNT_SWITCHES_MISSED);
    return false;
  }
  add_interval(task, &s->slots[i], start, end, s->out_reason, true);
  count(GP_COUNT_SWITCH_INS_REPAIRED);
  return true;
}

static __always_inline void switch_out(void* ctx, bool preempt, struct task_struct* prev,
                                       __u64 now) {
  struct thread_state* s =
      bpf_task_storage_get(&threads, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
  if (!s) {
    count(GP_COUNT_THREAD_STATE_FAILED);
    return;
  }
  const __u64 arrivals = arrivals_of(prev); /* this turn counted */
  if (s->out_ns != 0) time_missed_switch_in(prev, s, arrivals - s->arrivals, now); /* it ran */
  s->arrivals = arrivals;
  __u32 slot = slot_of(ctx, prev, s, now, preempt);
  s->out_slot = slot;
  s->out_reason = off_cpu_reason(preempt, prev);
  s->out_ns = slot <= GP_STACKLESS_SLOT ? now : 0;
}

static __always_inline void switch_in(struct task_struct* next, __u64 now) {
  struct thread_state* s = bpf_task_storage_get(&threads, next, 0, 0);
  if (!s) return;
  const __u64 arrivals = arrivals_of(next); /* this turn is not counted yet */
  const __u64 seen = s->arrivals;
  s->arrivals = arrivals | GP_SEEN_IN;
  if (s->out_ns == 0) {
    /* Switched in last time, and in again: the switch out between was not brought. An
     * exiting thread's switches out are left untimed on purpose (timed_out). */
    if ((seen & GP_SEEN_IN) && !(next->flags & GP_PF_EXITING)) count(GP_COUNT_SWITCHES_MISSED);
    return;
  }
  if (arrivals != seen) {
    /* Turns on a CPU since the switch out that the tracepoint did not bring: where there
     * was one, its beginning ends the interval; the time off CPU after it is lost. */
    if (time_missed_switch_in(next, s, arrivals - seen, now)) count(GP_COUNT_SWITCHES_MISSED);
    return;
  }
  __u64 start = s->out_ns;
  s->out_ns = 0;
  __u32 i = s->out_slot;
  if (i > GP_STACKLESS_SLOT) return;
  if (now < start) { /* the run queues' clocks disagree: not timed */
    count(GP_COUNT_CLOCK_BACKWARDS);
    return;
  }
  add_interval(next, &s->slots[i], start, now, s->out_reason, true);
}

/* Whether a switched-out or switched-in task is one of ours. Decided before the clock is
 * read, so switches of other processes cost no clock read. */
static __always_inline bool timed_out(struct task_struct* prev) {
  if (prev->pid == 0 || !followed(prev->tgid)) return false;
  /* An exiting thread's last switches are not waits (its runs went out in on_exit). */
  if (prev->flags & GP_PF_EXITING) return false;
  return !(prev->flags & GP_PF_KTHREAD) || include_kernel_threads;
}

static __always_inline bool timed_in(struct task_struct* next) {
  return next->pid != 0 && followed(next->tgid);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct* prev, struct task_struct* next) {
  const bool out = timed_out(prev), in = timed_in(next);
  if (!out && !in) return 0;
  const __u64 now = switch_clock(out ? prev : next);
  if (out) switch_out(ctx, preempt, prev, now);
  if (in) switch_in(next, now);
  return 0;
}

/* A thread's pending runs would wait for intervals that never come. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct* p) {
  if (!followed(p->tgid)) return 0;
  struct thread_state* s = bpf_task_storage_get(&threads, p, 0, 0);
  if (!s) return 0;
  send_runs(p, s);
  return 0;
}

/* Run once by the loader when profiling stops, after the switch and exit programs are
 * detached: each followed thread still alive sends its pending runs, and a thread that is
 * off CPU at that moment sends the interval so far (it would otherwise be lost whole: a
 * worker blocked through a --duration window showed no time at all). */
SEC("iter/task")
int flush_threads(struct bpf_iter__task* ctx) {
  struct task_struct* task = ctx->task;
  if (!task || !followed(task->tgid)) return 0;
  struct thread_state* s = bpf_task_storage_get(&threads, task, 0, 0);
  if (!s) return 0;
  const __u32 i = s->out_slot;
  if (s->out_ns != 0 && i <= GP_STACKLESS_SLOT) {
    /* Now, in the switch clock: CLOCK_MONOTONIC less this CPU's offset. */
    const __u64 now = bpf_ktime_get_ns() - clock_offset(bpf_get_current_task_btf(), false);
    if (now > s->out_ns) add_interval(task, &s->slots[i], s->out_ns, now, s->out_reason, false);
    s->out_ns = 0;
  }
  send_runs(task, s);
  return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct* p) {
  if (!followed(p->tgid)) return 0;
  struct gp_event_header* e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
  if (!e) {
    count(GP_COUNT_RINGBUF_FULL);
    return 0;
  }
  fill_header(e, GP_EVENT_EXEC, p->tgid, p->pid, bpf_ktime_get_ns());
  /* Wakes the loader: the new program's maps are best read before it runs much (a
   * short-lived program, such as a wrapper script that execs again, is gone soon). */
  bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
  return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct* parent, struct task_struct* child) {
  if (follow_all) return 0;
  __u32 child_tgid = child->tgid;
  if (child_tgid == parent->tgid || !followed(parent->tgid) || child_tgid >= GP_PID_LIMIT) {
    return 0;
  }
  __sync_fetch_and_or(&followed_pids[pid_word(child_tgid)], 1ull << (child_tgid % 64));
  count(GP_COUNT_PROCESSES_FOLLOWED);
  return 0;
}
