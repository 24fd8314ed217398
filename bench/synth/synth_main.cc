// gpuperf_synth: writes a synthetic trace for benchmarks and experiments.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "synth/synthetic_trace.h"

int main(int argc, char** argv) {
  gpuperf::synth::SyntheticOptions options;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "gpuperf_synth: %s needs a value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "-o")
      out = value("-o");
    else if (arg == "--kernels")
      options.kernels = std::strtoull(value("--kernels"), nullptr, 10);
    else if (arg == "--threads")
      options.threads = std::atoi(value("--threads"));
    else if (arg == "--devices")
      options.devices = std::atoi(value("--devices"));
    else if (arg == "--seed")
      options.seed = std::strtoull(value("--seed"), nullptr, 10);
    else if (arg == "--pid")
      options.pid = std::atoi(value("--pid"));
    else if (arg == "--rank")
      options.rank = std::atoi(value("--rank"));
    else if (arg == "--world-size")
      options.world_size = std::atoi(value("--world-size"));
    else if (arg == "--no-api")
      options.api_records = false;
    else {
      std::fprintf(stderr,
                   "usage: gpuperf_synth -o FILE [--kernels N (10000000)] [--threads N] "
                   "[--devices N] [--seed N] [--pid N] [--no-api] [--rank R --world-size N]\n");
      return arg == "-h" || arg == "--help" ? 0 : 2;
    }
  }
  if (out.empty() || options.threads == 0 || options.devices == 0) {
    std::fprintf(stderr, "gpuperf_synth: -o FILE is required (threads, devices >= 1)\n");
    return 2;
  }
  gpuperf::Status status = gpuperf::synth::WriteSyntheticTrace(out, options);
  if (!status.ok()) {
    std::fprintf(stderr, "gpuperf_synth: %s\n", status.message().c_str());
    return 1;
  }
  return 0;
}
