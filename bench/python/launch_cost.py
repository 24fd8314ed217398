#!/usr/bin/env python3
"""What gpuperf's recording costs a launch from a deep Python stack, without a GPU.

A real CPython launches through the fake CUDA extension (tests/fakes/fake_cuda_python_ext.cc,
the GIL released as PyTorch does) from the bottom of DEPTH Python frames, every fifth of them
entered from C (map), as PyTorch's module calls enter Python from C. One process, under
`gpuperf record`, switches its recording between levels through the injection library's
gpuperf_bench_toggle (src/inject/cupti/bench_toggle.cc) and times a batch of launches at each,
round after round; it prints each level's median nanoseconds per launch and its difference to
CUPTI attached with nothing on (`none`). The fake CUDA call itself and the loop are in every
level, so the differences are gpuperf's own callback work (the fake CUPTI's dispatch is
cheaper than the real one's, and the caches are warmer than between a real model's launches:
a floor for the GPU machine's numbers, for comparing changes on one machine).

  gpuperf record --inject-lib LIB -o DIR -- python3 launch_cost.py EXTENSION_DIR
      [--depth 40] [--batch 4000] [--rounds 15] [--levels full,nomemo,native,nostacks,none]
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

from decode_overhead import level_value  # the benchmark hook's levels by name


def nested(depth, work):
    """Runs work() under `depth` more Python frames; every fifth one is entered from C."""
    if depth <= 0:
        return work()
    if depth % 5 == 0:
        return next(map(lambda _: nested(depth - 1, work), (0,)))
    return nested(depth - 1, work)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("extension_dir")
    parser.add_argument("--depth", type=int, default=40)
    parser.add_argument("--batch", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--levels", default="full,nomemo,native,nostacks,none",
                        help="levels by decode_overhead.py's names (none is needed)")
    args = parser.parse_args(argv)
    levels = [name for name in args.levels.split(",") if name]
    # (torch.profiler's levels need torch: not here)
    unknown = [name for name in levels if not isinstance(level_value(name), int)]
    if unknown or "none" not in levels:
        parser.error(f"--levels: decode_overhead.py's level names, with none (unknown: {unknown})")
    sys.path.insert(0, args.extension_dir)
    import _gpuperf_fakecuda as cuda

    cuda.init()  # loads the injection library named by CUDA_INJECTION64_PATH
    path = os.environ.get("CUDA_INJECTION64_PATH", "")
    try:
        toggle = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY).gpuperf_bench_toggle
    except (OSError, AttributeError):
        print("launch_cost: run it under `gpuperf record` (no gpuperf_bench_toggle)",
              file=sys.stderr)
        return 1
    toggle.argtypes, toggle.restype = [ctypes.c_int], ctypes.c_int
    launch = cuda.launch
    timings = {name: [] for name in levels}

    def batch(n):
        for _ in range(n):
            launch("_Z4stepv")

    def measure():
        for _ in range(args.rounds):
            for name in levels:
                if toggle(level_value(name)) != 0:
                    raise RuntimeError(f"gpuperf_bench_toggle({level_value(name)}) failed")
                batch(200)  # the level's first launches (memo fills) are not timed
                start = time.perf_counter_ns()
                batch(args.batch)
                timings[name].append((time.perf_counter_ns() - start) / args.batch)
            cuda.synchronize()  # the writer drains between rounds

    nested(args.depth, measure)
    toggle(1)
    cuda.synchronize()
    base = statistics.median(timings["none"])
    print(f"launch_cost: Python {sys.version.split()[0]}, {args.depth} frames, "
          f"{args.rounds} rounds of {args.batch} launches a level; ns per launch, median")
    for name in levels:
        value = statistics.median(timings[name])
        spread = f"[{min(timings[name]):.0f}..{max(timings[name]):.0f}]"
        added = "" if name == "none" else f"  {value - base:+8.0f} over none"
        print(f"  {name:<10} {value:8.0f} {spread:<16}{added}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
