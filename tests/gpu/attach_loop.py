#!/usr/bin/env python3
"""A PyTorch inference loop for gpuperf attach's GPU check (tests/gpu/checks/attach.sh),
started without gpuperf: the examples' TinyTransformer (examples/pytorch_transformer.py), one
forward pass and a synchronization per step, each step timed.

usage: attach_loop.py STEPS_FILE STOP_FILE MAX_SECONDS
  one line per step in STEPS_FILE: "END_NS STEP_NS" (time.monotonic_ns, CLOCK_MONOTONIC);
  ends when STOP_FILE exists or after MAX_SECONDS; prints "attach-loop: ready pid=P" once
  warm and "attach-loop: done steps=N" at the end.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import torch  # noqa: E402
from pytorch_transformer import TinyTransformer, inference_step  # noqa: E402


def serve(model, tokens, steps_file, stop_file, limit_ns):
    """The loop attach looks into: its frames are what the trace's stacks must show."""
    count = 0
    start = time.monotonic_ns()
    with open(steps_file, "w") as out:
        while True:
            begin = time.monotonic_ns()
            inference_step(model, tokens)
            torch.cuda.synchronize()
            end = time.monotonic_ns()
            out.write(f"{end} {end - begin}\n")
            count += 1
            if count % 16 == 0:
                out.flush()
                if os.path.exists(stop_file) or end - start > limit_ns:
                    return count


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    steps_file, stop_file, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    torch.manual_seed(0)
    model = TinyTransformer(8192, 512, 8, 6, 256).cuda().eval()
    tokens = torch.randint(0, 8192, (8, 256), device="cuda")
    for _ in range(20):
        inference_step(model, tokens)
    torch.cuda.synchronize()
    print(f"attach-loop: ready pid={os.getpid()}", flush=True)
    count = serve(model, tokens, steps_file, stop_file, int(seconds * 1e9))
    print(f"attach-loop: done steps={count}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
