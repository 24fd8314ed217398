// What libgpuperf_preload.so exports for the injection library (src/inject/preload_stats.cc),
// which finds it with dlsym: no link between the two, and either may be absent.
#pragma once

// How many times a CUPTI client other than gpuperf was refused CUPTI's subscriber slot while
// gpuperf held it (a std::atomic<unsigned long long>, only ever incremented).
#define GPUPERF_PRELOAD_REFUSALS_SYMBOL "gpuperf_preload_cupti_refusals"

// How many times a CUPTI client other than gpuperf registered its own activity buffers after
// gpuperf had registered its own (which CUPTI then stops asking): the same kind of counter.
#define GPUPERF_PRELOAD_TAKEOVERS_SYMBOL "gpuperf_preload_buffer_takeovers"
