/* The few kernel types the BPF programs read, declared by hand for CO-RE.
 *
 * Instead of a vmlinux.h dumped from the build machine's /sys/kernel/btf/vmlinux: the
 * build then needs no kernel BTF (containers and chroots often have none, and the
 * machine that runs gpuperf is rarely the one that built it), and the ~3 MB header is
 * not parsed on every build. Each struct lists only the fields we read; with
 * preserve_access_index, libbpf relocates every access to the running kernel's own
 * layout at load time (from its BTF), so field order and offsets here do not matter.
 * The uapi headers provide the stable ABI: map types, helper flags, the perf event
 * program context. */
#ifndef GPUPERF_EBPF_KERNEL_TYPES_H_
#define GPUPERF_EBPF_KERNEL_TYPES_H_

#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/types.h>

typedef _Bool bool;
#define true 1
#define false 0

/* A CPU's run queue: `clock` is its sched_clock, which __schedule() updates before the
 * sched_switch tracepoint fires, so at a context switch it is the time of the switch.
 * Reached from a task on that CPU through its CFS run queue (CONFIG_FAIR_GROUP_SCHED,
 * which distribution kernels have; without it the programs use bpf_ktime_get_ns). */
struct rq {
  unsigned long long clock;
} __attribute__((preserve_access_index));

struct cfs_rq {
  struct rq* rq;
} __attribute__((preserve_access_index));

struct sched_entity {
  struct cfs_rq* cfs_rq;
} __attribute__((preserve_access_index));

/* What the scheduler itself keeps of a thread's turns on a CPU (CONFIG_SCHED_INFO): how many
 * it had and when the last one began, in the clock of the run queue it began on. */
struct sched_info {
  unsigned long pcount;
  unsigned long long last_arrival;
} __attribute__((preserve_access_index));

struct task_struct {
  int pid;
  int tgid;
  unsigned int __state; /* 5.14 and later */
  unsigned int flags;
  struct sched_entity se;
  struct sched_info sched_info;
} __attribute__((preserve_access_index));

/* The context of an iter/task program: one task (thread) of the machine per run. */
struct bpf_iter__task {
  struct task_struct* task;
} __attribute__((preserve_access_index));

/* Kernels before 5.14 call the state field `state` (a long). */
struct task_struct___before_5_14 {
  long state;
} __attribute__((preserve_access_index));

/* The user registers saved at kernel entry (arch/x86 naming, not the uapi one). */
struct pt_regs___kernel {
  unsigned long bp;
  unsigned long sp;
  unsigned long ip;
  unsigned long orig_ax;
} __attribute__((preserve_access_index));

/* Where the main thread's stack begins (argc, then argv and the environment above it): an
 * on-CPU sample's stack copy of the main thread stops there instead of failing at the end
 * of the mapping. */
struct mm_struct___stack {
  unsigned long start_stack;
} __attribute__((preserve_access_index));
struct task_struct___mm {
  struct mm_struct___stack* mm;
} __attribute__((preserve_access_index));

/* The thread pointer user space set (pthread_self() with glibc and musl): for CPython 3.10,
 * whose thread states record that instead of the thread id. */
struct thread_struct___tls {
  unsigned long fsbase; /* x86-64 */
} __attribute__((preserve_access_index));
struct thread_struct___tls_arm64 {
  struct {
    unsigned long tp_value;
  } uw;
} __attribute__((preserve_access_index));
struct task_struct___tls {
  struct thread_struct___tls thread;
} __attribute__((preserve_access_index));
struct task_struct___tls_arm64 {
  struct thread_struct___tls_arm64 thread;
} __attribute__((preserve_access_index));

/* include/linux/sched.h */
#define GP_TASK_RUNNING 0x0000
#define GP_TASK_INTERRUPTIBLE 0x0001
#define GP_TASK_UNINTERRUPTIBLE 0x0002
#define GP_PF_EXITING 0x00000004
#define GP_PF_KTHREAD 0x00200000

#endif /* GPUPERF_EBPF_KERNEL_TYPES_H_ */
