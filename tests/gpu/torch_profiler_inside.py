"""A program that profiles itself with torch.profiler, to be run under `gpuperf record`.

Prints one line the GPU check reads: how many CUDA kernel events torch.profiler itself
collected, and how many kernels the program launched (so both sides can be compared).
"""
import torch
from torch.profiler import ProfilerActivity, profile


def step(x, w):
    return torch.relu(x @ w).sum()


def main():
    x = torch.randn(256, 256, device="cuda")
    w = torch.randn(256, 256, device="cuda")
    step(x, w)
    torch.cuda.synchronize()
    steps = 20
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step(x, w)
        torch.cuda.synchronize()
    cuda_events = sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    print(f"torch_profiler_inside: steps={steps} torch_profiler_cuda_events={cuda_events}", flush=True)


if __name__ == "__main__":
    main()
