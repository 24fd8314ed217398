// The live page: a small file per recorded process (<dir>/<pid>.live, mode 0600, mapped
// shared) that the injection library keeps up to date and `gpuperf top` / `gpuperf serve`
// read while the process runs (docs/live.md).
//
// One writer (the injection library's writer thread) and any number of readers in other
// processes, with nothing shared that a crashed process could hold: each block has its own
// seqlock (live_seqlock.h), readers retry a bounded number of times and never wait on the
// writer, and a page whose process is gone is recognized by pid + start time and skipped.
//
// The layout is versioned (kLayoutVersion). Only fixed-size plain data: no pointers, no
// std types other than the seqlocks' counters. Adding a block at the end keeps the version
// (older readers never look past what they know; `page_bytes` says how much there is);
// changing or moving anything bumps it, and a reader skips a page of another version.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "gpuperf/stats.h"

namespace gpuperf::live {

inline constexpr char kPageMagic[8] = {'G', 'P', 'U', 'P', 'L', 'I', 'V', 'E'};
inline constexpr uint32_t kLayoutVersion = 1;

inline constexpr uint32_t kMaxDevices = 16;   // devices of one process
inline constexpr uint32_t kMaxKernels = 64;   // top kernels by GPU time, all devices
inline constexpr uint32_t kMaxApis = 32;      // APIs by calls; the last row holds the rest
inline constexpr uint32_t kRingSeconds = 64;  // 1-second buckets kept
inline constexpr uint32_t kKernelNameBytes = 232;
inline constexpr uint32_t kApiNameBytes = 40;

// Copies by direction (MemcpyKind folded: arrays count as device memory).
enum CopyKind : uint32_t { kCopyHtoD, kCopyDtoH, kCopyDtoD, kCopyPeer, kCopyOther, kCopyKinds };
inline constexpr const char* kCopyKindNames[kCopyKinds] = {"htod", "dtoh", "dtod", "peer", "other"};

// Even: the block is stable; odd: the writer is inside it. Its own cache line, so readers
// spinning on one block do not disturb the writer's stores to the next.
struct alignas(64) Seqlock {
  std::atomic<uint32_t> sequence{0};
};

// Who wrote the page. Written once, before the page is announced.
struct Identity {
  uint32_t pid = 0;
  uint32_t parent_pid = 0;
  // /proc/<pid>/stat's starttime (clock ticks after boot): with the pid it names one process,
  // so a page left by a dead process whose pid was reused is told apart.
  uint64_t start_ticks = 0;
  uint64_t start_monotonic_ns = 0;
  uint64_t start_realtime_ns = 0;
  int32_t rank = -1;  // RANK (torchrun), OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID
  int32_t local_rank = -1;
  int32_t world_size = -1;
  uint32_t reserved = 0;
  char host[64] = {};
  char command[512] = {};  // argv joined by spaces, cut to fit
  char version[32] = {};   // gpuperf version of the writer
};

// Monotonic totals of one device since the process started recording, except the memory
// gauges. Times are sums of durations: overlapping work counts once per operation, while
// active_ns counts any work on the device once (the union of the intervals).
struct DeviceCounters {
  uint32_t device_id = 0;  // CUDA's ordinal inside the process
  uint32_t has_uuid = 0;
  uint8_t uuid[16] = {};
  char name[64] = {};
  uint64_t active_ns = 0;
  uint64_t kernel_ns = 0;
  uint64_t copy_ns = 0;
  uint64_t set_ns = 0;
  uint64_t kernels = 0;
  uint64_t copies = 0;
  uint64_t sets = 0;
  uint64_t copy_bytes[kCopyKinds] = {};
  uint64_t set_bytes = 0;
  uint64_t memory_current = 0;  // device memory allocated through CUDA, bytes (gauge)
  uint64_t memory_peak = 0;     // the most at once (gauge)
  uint64_t allocations = 0;
  uint64_t frees = 0;
};

// Process-wide totals and the device table.
struct Counters {
  uint64_t updated_monotonic_ns = 0;  // when the writer last published (CLOCK_MONOTONIC)
  uint64_t updates = 0;
  uint64_t api_calls = 0;
  uint64_t api_failures = 0;  // non-zero return codes other than "not ready"
  uint64_t api_ns = 0;
  uint64_t syncs = 0;
  uint64_t sync_ns = 0;  // CPU time waiting in synchronization calls
  uint32_t device_count = 0;
  uint32_t capturing = 0;  // inside the capture range (record --delay/--duration)
  DeviceCounters devices[kMaxDevices];
};

struct KernelEntry {
  uint32_t device_id = 0;
  uint32_t reserved = 0;
  uint64_t ns = 0;
  uint64_t count = 0;
  char name[kKernelNameBytes] = {};  // demangled, cut to fit
};

// The kernels with the most GPU time, most first.
struct Kernels {
  uint32_t count = 0;
  uint32_t reserved = 0;
  uint64_t other_ns = 0;  // kernels not in the table
  uint64_t other_count = 0;
  KernelEntry entries[kMaxKernels];
};

struct ApiEntry {
  uint64_t calls = 0;
  uint64_t failures = 0;
  uint64_t ns = 0;
  char name[kApiNameBytes] = {};  // "(other)" for the last row when there were more
};

struct Apis {
  uint32_t count = 0;
  uint32_t reserved = 0;
  ApiEntry entries[kMaxApis];
};

// One second of one device's activity (CLOCK_MONOTONIC seconds of the GPU timestamps).
// A bucket whose `second` is not the one asked for holds nothing of it.
struct DeviceBucket {
  uint64_t second = 0;
  uint64_t active_ns = 0;
  uint64_t kernel_ns = 0;
  uint64_t copy_ns = 0;
  uint64_t set_ns = 0;
  uint64_t kernels = 0;
  uint64_t copy_bytes = 0;
};

struct ProcessBucket {
  uint64_t second = 0;
  uint64_t api_calls = 0;
  uint64_t api_failures = 0;
  uint64_t sync_ns = 0;
};

// Bucket of second s is at index s % kRingSeconds.
struct Ring {
  ProcessBucket process[kRingSeconds];
  DeviceBucket devices[kMaxDevices][kRingSeconds];  // same device order as Counters
};

// The recorder's own counters (gpuperf/stats.h): drops by reason and costs.
struct Stats {
  uint64_t values[kStatSlots] = {};
};

template <class T>
struct Block {
  Seqlock lock;
  T data;
};

struct Page {
  // Written last at creation (magic with release order): a reader that sees the magic sees
  // the rest of the header.
  char magic[8] = {};
  uint32_t version = 0;
  uint32_t page_bytes = 0;
  Block<Identity> identity;
  Block<Counters> counters;
  Block<Kernels> kernels;
  Block<Apis> apis;
  Block<Ring> ring;
  Block<Stats> stats;
};

// What the header of a page of any version has, for a reader to check before more.
inline constexpr size_t kHeaderBytes = offsetof(Page, identity);

}  // namespace gpuperf::live
