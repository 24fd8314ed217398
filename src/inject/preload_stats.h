// The preload library's count (src/preload/preload.cc) copied into the trace's stats.
#pragma once

namespace gpuperf::inject {

// Sets cupti_clients_refused from libgpuperf_preload.so's counter; without that library in the
// process (not preloaded, or GPUPERF_PRELOAD=off) the stat stays 0. Called with each snapshot.
void UpdatePreloadStats();
// Whether the preload library saw another CUPTI client register its own activity buffers
// after gpuperf's (they then get CUPTI's records). False without that library.
bool PreloadSawBufferTakeover();

}  // namespace gpuperf::inject
