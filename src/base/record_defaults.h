// The recording defaults that both halves must agree on: the injection library applies them,
// `gpuperf record` names them in --help and in what it says after a run.
#pragma once

#include <cstdint>

namespace gpuperf {

// How often the writer brings the trace file up to date: a process that dies without exit
// handlers (SIGKILL, OOM, _exit, exec) loses at most this much.
inline constexpr uint32_t kDefaultFlushPeriodMs = 500;
// How often CUPTI's own worker hands back full activity buffers. Shorter than the file's
// period: it bounds how much CUPTI holds at a high record rate (docs/recording.md, "Memory").
inline constexpr uint32_t kDefaultCuptiFlushPeriodMs = 100;
// One CUPTI activity buffer. A thread's first buffer is smaller (kFirstBufferKiB), so
// short-lived launching threads do not each pin a full one.
inline constexpr uint32_t kDefaultBufferKiB = 2048;
inline constexpr uint32_t kFirstBufferKiB = 256;
// The soft memory budget: past it the recorder grows (one notice line), up to the hard cap,
// which is min(kMaxMemoryCapMiB, physical memory / kMaxMemoryPhysicalFraction) unless
// --max-memory sets it.
inline constexpr uint32_t kSoftMemoryMiB = 64;
inline constexpr uint32_t kMaxMemoryCapMiB = 1024;
inline constexpr uint32_t kMaxMemoryPhysicalFraction = 16;
// The flight recorder (docs/flight-recorder.md): its ring's default memory cap, and the
// signal that asks for a dump (SIGUSR2; `record --flight-signal` changes it).
inline constexpr uint32_t kFlightMemoryMiB = 256;
inline constexpr int kFlightDefaultSignal = 12;

// What `record`'s options and the GPUPERF_* variables they become accept (both read through
// base/quantity.h; a value outside is refused, never clamped).
inline constexpr uint32_t kMinBufferKiB = 64;  // CUPTI needs room for a few records
inline constexpr uint32_t kMaxBufferKiB = 1 << 20;
inline constexpr uint32_t kMinMaxMemoryMiB = 4;
inline constexpr uint32_t kMaxMaxMemoryMiB = 1 << 16;
inline constexpr uint32_t kMinFlushPeriodMs = 10;
inline constexpr uint32_t kMaxFlushPeriodMs = 600'000;
inline constexpr uint32_t kMaxStackDepth = 256;
inline constexpr uint32_t kMaxPowerHz = 1000;
inline constexpr uint32_t kMinFlightWindowMs = 100;
inline constexpr uint32_t kMaxFlightWindowMs = 24 * 3600 * 1000;
inline constexpr uint32_t kMaxFlightMemoryMiB = 1 << 20;
inline constexpr uint32_t kMaxSampleLaunchesPerSecond = 1'000'000;
inline constexpr uint32_t kMinPcPeriod = 5;  // PC sampling: one sample per 2^N cycles
inline constexpr uint32_t kMaxPcPeriod = 31;
inline constexpr uint32_t kMaxCubinCapMiB = 1 << 20;
inline constexpr uint32_t kMaxMetricWindowMs = 24 * 3600 * 1000;  // metrics --ranges window:

}  // namespace gpuperf
