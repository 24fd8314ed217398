#!/usr/bin/env python3
"""A small model under torch.compile, for tests/gpu/checks/pytorch_extra.sh.

  torch_compile_run.py --mode compile   Inductor: its Triton kernels, launched through the
                                        driver API by Triton's launcher from the generated
                                        wrapper code (/tmp/torchinductor_*/*.py)
  torch_compile_run.py --mode graphs    mode="reduce-overhead": the same kernels captured
                                        into a CUDA graph and replayed (cudaGraphLaunch)

The lines marked "# line:NAME" are what the check looks for in the launch stacks. Prints
the examples' summary line last (kernels=-1: Inductor decides them).
"""

import argparse
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        h = F.gelu(self.up(self.norm(x)))  # line:block_up
        return x + self.down(h)  # line:block_down


class Model(nn.Module):
    def __init__(self, dim, layers):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(layers))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)  # line:model_block
        return torch.softmax(x, dim=-1)  # line:model_softmax


def step(compiled, x):
    return compiled(x)  # line:step


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["compile", "graphs"], required=True)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("torch_compile_run: no CUDA device", file=sys.stderr)
        return 1
    torch.manual_seed(0)
    model = Model(args.dim, args.layers).cuda().eval()
    options = {"mode": "reduce-overhead"} if args.mode == "graphs" else {}
    compiled = torch.compile(model, **options)
    x = torch.randn(8, 64, args.dim, device="cuda")
    with torch.no_grad():
        want = model(x)
        for _ in range(3):  # compile, then (graphs) warm up and record the graph
            got = step(compiled, x)
        torch.cuda.synchronize()
        if not torch.allclose(got, want, atol=1e-3, rtol=1e-3):
            print("torch_compile_run: compiled result differs from eager", file=sys.stderr)
            return 3
        start = time.perf_counter()
        for _ in range(args.steps):
            step(compiled, x)
        torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - start) * 1e3
    print(f"gpuperf-example: name=torch_{args.mode} kernels=-1 memcpy_bytes=-1 memset_bytes=-1 "
          f"nvtx_ranges=0 graph_launches=-1 graph_kernels=-1 wall_ms={wall_ms:.3f} "
          f"steps={args.steps}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
