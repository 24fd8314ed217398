#!/usr/bin/env python3
"""Runs examples/pytorch_transformer.py's workload under torch.profiler (Kineto), the
comparison point for PyTorch users: CPU and CUDA activities, optionally with Python stacks.

usage: torch_profiler_run.py [--with-stack] [--trace FILE] [--examples-dir DIR] -- ARGS...
  ARGS are pytorch_transformer.py's own (--steps, --train, ...). The trace is exported as
  Chrome JSON to FILE (what a user of the profiler gets; its cost is part of the process's
  wall time, as gpuperf's writing is part of its). Prints the example's summary line.
"""

import argparse
import os
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--with-stack", action="store_true", help="record Python stacks")
    parser.add_argument("--trace", help="export a Chrome trace here")
    parser.add_argument("--examples-dir", default=os.environ.get("EXAMPLES_DIR"),
                        help="where pytorch_transformer.py is (default: $EXAMPLES_DIR, then "
                             "the repository's examples/)")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    example_args = args.args[1:] if args.args[:1] == ["--"] else args.args

    candidates = [args.examples_dir] if args.examples_dir else []
    candidates.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                   "examples"))
    for directory in candidates:
        if os.path.exists(os.path.join(directory, "pytorch_transformer.py")):
            sys.path.insert(0, directory)
            break
    import pytorch_transformer as example

    options = example.parse_args(example_args)
    if example.torch is None or not example.torch.cuda.is_available():
        return example.main(example_args)  # prints why and exits non-zero
    torch = example.torch
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    try:
        with torch.profiler.profile(activities=activities, with_stack=args.with_stack) as prof:
            summary = example.run_from_args(options)
    except example.WrongResult as error:
        print(f"wrong result: {error}", file=sys.stderr)
        return example.EXIT_WRONG_RESULT
    if args.trace:
        prof.export_chrome_trace(args.trace)
    print(example.format_summary(summary), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
