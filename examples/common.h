// Shared helpers for the example programs: error checks that end the program with a clear
// message, a host wall clock, and the one summary line every example prints last.
//
// Exit codes of every example: 0 ok, 1 a CUDA/cuBLAS error, 2 bad command line, 3 a wrong
// result. The GPU tests and the overhead harness rely on them.
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

// The static-cudart builds report their own name, so results are never mixed up.
#ifdef EXAMPLE_STATIC_CUDART
#define EXAMPLE_NAME(name) name "_static"
#else
#define EXAMPLE_NAME(name) name
#endif

namespace examples {

inline constexpr int kExitCudaError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitWrongResult = 3;

[[noreturn]] inline void DieCuda(cudaError_t err, const char* call, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, call, cudaGetErrorName(err),
               cudaGetErrorString(err));
  std::exit(kExitCudaError);
}

[[noreturn]] inline void DieWrong(const char* what) {
  std::fprintf(stderr, "wrong result: %s\n", what);
  std::exit(kExitWrongResult);
}

[[noreturn]] inline void DieUsage(const char* program, const char* usage) {
  std::fprintf(stderr, "usage: %s %s\n", program, usage);
  std::exit(kExitUsage);
}

// Parses a positive integer option value; exits with a usage error otherwise.
inline long ParsePositive(const char* text, const char* option) {
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value <= 0) {
    std::fprintf(stderr, "%s wants a positive integer, got '%s'\n", option, text);
    std::exit(kExitUsage);
  }
  return value;
}

}  // namespace examples

// Every CUDA runtime call goes through this: on failure, name the call and stop.
#define CUDA_CHECK(call)                                               \
  do {                                                                 \
    cudaError_t cuda_check_err_ = (call);                              \
    if (cuda_check_err_ != cudaSuccess)                                \
      ::examples::DieCuda(cuda_check_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a <<<>>> launch: catches bad launch configurations at once (execution errors surface
// at the next synchronizing call, which is checked too).
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

namespace examples {

// Wall time from construction, on the host's monotonic clock.
class WallTimer {
 public:
  WallTimer() : start_(std::chrono::steady_clock::now()) {}
  double ElapsedMs() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// What the program itself issued, so a profiler's record can be checked against it.
// kernels counts kernel executions: direct launches plus the kernel nodes run by graph
// launches (nodes x launches); -1 means unknown (e.g. inside cuBLAS).
struct Summary {
  const char* name = "";
  long long kernels = 0;
  long long memcpy_bytes = 0;
  long long memset_bytes = 0;
  long long nvtx_ranges = 0;
  long long graph_launches = 0;
  long long graph_kernels = 0;
  double wall_ms = 0;
  std::string extra;  // " key=value" pairs appended after wall_ms (example-specific)

  void AddExtra(const char* key, long long value) {
    extra += ' ';
    extra += key;
    extra += '=';
    extra += std::to_string(value);
  }
  void AddExtra(const char* key, double value) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), " %s=%.4f", key, value);
    extra += buf;
  }
};

inline void PrintSummary(const Summary& s) {
  std::printf(
      "gpuperf-example: name=%s kernels=%lld memcpy_bytes=%lld memset_bytes=%lld "
      "nvtx_ranges=%lld graph_launches=%lld graph_kernels=%lld wall_ms=%.3f%s\n",
      s.name, s.kernels, s.memcpy_bytes, s.memset_bytes, s.nvtx_ranges, s.graph_launches,
      s.graph_kernels, s.wall_ms, s.extra.c_str());
  std::fflush(stdout);
}

// |a - b| <= atol + rtol * |b|, elementwise; reports the first mismatch.
inline bool AllClose(const float* got, const float* want, size_t n, float atol, float rtol,
                     const char* what) {
  for (size_t i = 0; i < n; ++i) {
    float diff = std::fabs(got[i] - want[i]);
    if (!(diff <= atol + rtol * std::fabs(want[i]))) {
      std::fprintf(stderr, "%s: element %zu is %.7g, expected %.7g\n", what, i, got[i], want[i]);
      return false;
    }
  }
  return true;
}

// A small deterministic generator so every run computes the same data (no <random> state
// differences between libstdc++ versions).
class Lcg {
 public:
  explicit Lcg(uint64_t seed) : state_(seed * 6364136223846793005ULL + 1442695040888963407ULL) {}
  uint32_t Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state_ >> 33);
  }
  // Uniform in [-scale, scale).
  float Uniform(float scale) {
    return scale * (static_cast<float>(Next() & 0xffffff) / 8388608.0f - 1.0f);
  }

 private:
  uint64_t state_;
};

}  // namespace examples
