// How the flight recorder treats each record type: a definition (kept for the life of
// the process), a timed record (kept for the window), or the CPU side of GPU work (kept
// for the window, and also for as long as the work it launched is in the window).
// Record types added later are timed records by default, timed by their start_ns/end_ns or
// timestamp_ns fields when they have them: they stay bounded by the window.
#pragma once

#include <algorithm>
#include <cstdint>

#include "gpuperf/records.h"

namespace gpuperf::inject {

template <class T>
inline constexpr bool kFlightDefinition = false;
template <>
inline constexpr bool kFlightDefinition<ProcessRecord> = true;
template <>
inline constexpr bool kFlightDefinition<ThreadRecord> = true;
template <>
inline constexpr bool kFlightDefinition<DeviceRecord> = true;
template <>
inline constexpr bool kFlightDefinition<ContextRecord> = true;
template <>
inline constexpr bool kFlightDefinition<ClockRecord> = true;
template <>
inline constexpr bool kFlightDefinition<StatRecord> = true;
template <>
inline constexpr bool kFlightDefinition<ModuleRecord> = true;
template <>
inline constexpr bool kFlightDefinition<RankRecord> = true;
// A communicator is what a window's NCCL collectives refer to.
template <>
inline constexpr bool kFlightDefinition<NcclCommRecord> = true;

// Records that say which CPU call made GPU work, joined to it by correlation id.
template <class T>
inline constexpr bool kFlightLaunchSide = false;
template <>
inline constexpr bool kFlightLaunchSide<ApiRecord> = true;
template <>
inline constexpr bool kFlightLaunchSide<LaunchLinkRecord> = true;
template <>
inline constexpr bool kFlightLaunchSide<ExternalCorrelationRecord> = true;

// The last moment a record covers (an interval counts while any part of it is in the
// window; a range that never ended counts at its start); 0 for a record without a time.
template <class T>
uint64_t FlightTime(const T& record) {
  if constexpr (requires { record.start_ns + record.end_ns; }) {
    return std::max<uint64_t>(record.start_ns, record.end_ns);
  } else if constexpr (requires { record.timestamp_ns + 0; }) {
    return record.timestamp_ns;
  } else {
    return 0;
  }
}

// Calls `visit(id)` for each correlation id of a GPU-side record (a kernel's, a copy's
// driver and runtime ids, ...): the launch-side records with those ids belong with it.
template <class T, class Visit>
void ForEachWorkCorrelation(const T& record, Visit&& visit) {
  if constexpr (!kFlightLaunchSide<T>) {
    if constexpr (requires { record.correlation_id + 0; }) {
      if (record.correlation_id != 0) visit(record.correlation_id);
    }
    if constexpr (requires { record.runtime_correlation_id + 0; }) {
      if (record.runtime_correlation_id != 0) visit(record.runtime_correlation_id);
    }
  }
}

}  // namespace gpuperf::inject
