// gpuperf_rank_synth: writes a synthetic multi-rank job (support/rank_trace.h), one trace
// per rank, for the end-to-end tests of the ranks, clock and energy analyses.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/rank_trace.h"

int main(int argc, char** argv) {
  gpuperf::testing::RankJobOptions o;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--agent") {
      o.with_agent = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr,
                   "usage: gpuperf_rank_synth -o DIR [--ranks N] [--steps N] [--step-us N] "
                   "[--slow-rank R --delay-us N] [--hosts A,B,...] [--host-clock-step-ns N] "
                   "[--wall-error-ns N] [--power-interval-us N] [--agent]\n");
      return 2;
    }
    const std::string value = argv[++i];
    if (arg == "-o") {
      out = value;
    } else if (arg == "--ranks") {
      o.ranks = std::stoul(value);
    } else if (arg == "--steps") {
      o.steps = std::stoul(value);
    } else if (arg == "--step-us") {
      o.step_ns = std::stoull(value) * 1000;
    } else if (arg == "--slow-rank") {
      o.slow_rank = std::stoi(value);
    } else if (arg == "--delay-us") {
      o.delay_ns = std::stoull(value) * 1000;
    } else if (arg == "--hosts") {
      for (size_t start = 0; start <= value.size();) {
        size_t comma = value.find(',', start);
        if (comma == std::string::npos) comma = value.size();
        o.hosts.push_back(value.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (arg == "--host-clock-step-ns") {
      o.host_clock_step_ns = std::stoll(value);
    } else if (arg == "--wall-error-ns") {
      o.wall_error_ns = std::stoll(value);
    } else if (arg == "--power-interval-us") {
      o.power_interval_ns = std::stoull(value) * 1000;
    } else {
      std::fprintf(stderr, "gpuperf_rank_synth: unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  if (out.empty()) {
    std::fprintf(stderr, "gpuperf_rank_synth: -o DIR is required\n");
    return 2;
  }
  gpuperf::Status status = gpuperf::testing::WriteRankJob(o, out);
  if (!status.ok()) {
    std::fprintf(stderr, "gpuperf_rank_synth: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
