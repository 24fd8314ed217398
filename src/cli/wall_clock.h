// `gpuperf attach --at TIME`: a moment on the wall clock (CLOCK_REALTIME), so that ranks on
// several hosts, their clocks in step (NTP, PTP), start their windows together.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpuperf/status.h"

namespace gpuperf::cli {

// TIME as nanoseconds since the epoch, given `now_ns` (the clock now) and the local time
// zone. Accepted:
//   HH:MM[:SS[.FFF]]                 today, local time (an hour already past is an error)
//   YYYY-MM-DDTHH:MM[:SS[.FFF]][Z]   local time, or UTC with Z (a space may stand for T)
//   @SECONDS[.FFF]                   seconds since the epoch (`date +%s`)
//   +DURATION                        from now (+5s, +1m; record's duration units)
// A time more than 1 s in the past is refused: the window could not begin there.
Result<uint64_t> ParseWallClock(std::string_view text, uint64_t now_ns);

}  // namespace gpuperf::cli
