#!/usr/bin/env python3
"""A PyTorch training step under gpuperf, in one process: the cost of linking backward
kernels to their forward ops' Python frames (src/inject/torch/autograd_link.h), and of the
whole recording, against no CUPTI at all.

Run under `gpuperf record` (it switches the recording through the injection library's
gpuperf_bench_toggle, as decode_overhead.py's in-process mode does): blocks of 8 training
steps of examples/pytorch_transformer.py's model alternate between the levels of
GPUPERF_AB_LEVELS (default detached,full,noautograd: CUPTI detached, the default recording,
the recording without the autograd link). The first step of each block is not counted. Prints
each level's median step and, paired per cycle of blocks, each level against detached and
full against noautograd.

    gpuperf record -o /tmp/t -- python3 bench/python/train_overhead.py [--cycles 12] [model]
"""
import argparse
import os
import sys
import time

os.environ.setdefault("GPUPERF_AB_LEVELS", "detached,full,noautograd")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples"))
import decode_overhead as harness  # noqa: E402


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=12, help="blocks of every level (12)")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=4096)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    import torch
    import pytorch_transformer as example

    torch.manual_seed(0)
    device = torch.device("cuda")
    model = example.TinyTransformer(args.vocab, args.dim, args.heads, args.layers, args.seq)
    model = model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, args.vocab, (args.batch, args.seq), device=device)
    targets = torch.roll(tokens, shifts=-1, dims=1)
    for _ in range(3):
        example.training_step(model, optimizer, tokens, targets)
    torch.cuda.synchronize()
    # After CUDA started: the injection library is loaded at cuInit.
    schedule = harness.ABSchedule(torch)
    if not schedule.ready():
        print("train_overhead: not under gpuperf record (no gpuperf_bench_toggle)", file=sys.stderr)
        return 1

    steps_ms = []
    for _ in range(args.cycles * len(harness.AB_LEVELS) * harness.AB_BLOCK):
        schedule.before_step()
        start = time.perf_counter()
        example.training_step(model, optimizer, tokens, targets)
        torch.cuda.synchronize()
        steps_ms.append((time.perf_counter() - start) * 1e3)
    schedule.finish()
    result = schedule.summary(steps_ms)

    levels = len(harness.AB_LEVELS)
    cycles = harness.block_cycles(range(len(result["block_medians"])), result["block_medians"])
    print(f"training step, {args.cycles} cycles of {levels} blocks of {harness.AB_BLOCK} steps "
          f"(batch {args.batch}, seq {args.seq}, dim {args.dim}, {args.layers} layers):")
    for name, median in result["median_ms"].items():
        against = harness.paired_ratio(cycles, name, "detached")
        note = f"  {against:.3f}x detached (paired)" if against and name != "detached" else ""
        print(f"  {name:12s} {median:8.3f} ms{note}")
    link = harness.paired_ratio(cycles, "full", "noautograd")
    if link is not None:
        print(f"  autograd link: full / noautograd {link:.3f}x (paired)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
