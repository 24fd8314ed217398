// What libgpuperf_preload.so exports for the injection library (src/inject/preload_stats.cc),
// which finds it with dlsym: no link between the two, and either may be absent.
#pragma once

// How many times a CUPTI client other than gpuperf was refused CUPTI's subscriber slot while
// gpuperf held it (a std::atomic<unsigned long long>, only ever incremented).
#define GPUPERF_PRELOAD_REFUSALS_SYMBOL "gpuperf_preload_cupti_refusals"
