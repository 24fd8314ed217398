"""A small data-parallel training run for gpuperf's multi-rank checks (docs/multi-rank.md).

Each rank trains a two-layer MLP under DistributedDataParallel with the NCCL backend; the
model is under DDP's 1 MB first bucket, so every step makes exactly one all-reduce of the
gradients. The loss is read back each step (as a training log would), so every rank starts a
step together. --slow-rank R --delay-ms D makes rank R sleep D ms at the start of every step:
the other ranks then wait about D ms in each all-reduce, and R is the straggler.

usage: torchrun --nproc-per-node 2 pytorch_ddp.py [--steps 30] [--slow-rank 1 --delay-ms 50]
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--slow-rank", type=int, default=-1)
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--batch", type=int, default=4096)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local_rank)
    torch.manual_seed(rank)
    # 512*256 + 256*256 weights (+ biases): ~0.8 MB of fp32 gradients, one DDP bucket.
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256)
    ).cuda()
    ddp = DistributedDataParallel(model, device_ids=[local_rank])
    optimizer = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    x = torch.randn(args.batch, 512, device="cuda")
    y = torch.randn(args.batch, 256, device="cuda")

    step_times = []
    for step in range(args.warmup + args.steps):
        started = time.perf_counter()
        if rank == args.slow_rank:
            time.sleep(args.delay_ms / 1000.0)
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        loss.item()  # the training log's read: waits for this step's all-reduce
        if step >= args.warmup:
            step_times.append(time.perf_counter() - started)
    torch.cuda.synchronize()
    dist.barrier()
    step_ms = 1000.0 * sum(step_times) / max(len(step_times), 1)
    print(
        f"gpuperf-example: name=pytorch_ddp rank={rank} world_size={world} "
        f"steps={args.warmup + args.steps} slow_rank={args.slow_rank} "
        f"delay_ms={args.delay_ms:g} step_ms={step_ms:.3f}",
        flush=True,
    )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
