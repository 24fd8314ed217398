"""Process trees that gpuperf must follow, for tests/gpu/checks/pytree.sh.

  spawn  multiprocessing 'spawn' workers, each launching kernels
  fork   a fork()ed child that starts CUDA after the fork (the parent never touches CUDA
         before forking), then the parent launches too
  exit   a worker that leaves through os._exit, one that dies of an uncaught exception

Prints one line per process: "process_tree: role=... pid=... kernels=N" (N kernels launched
through torch: a fixed number of elementwise ops, each one kernel).
"""
import multiprocessing as mp
import os
import sys

import torch

OPS = 40


def launch(role):
    x = torch.ones(1024, device="cuda")
    for _ in range(OPS):
        x = x * 1.0001  # one elementwise kernel each
    torch.cuda.synchronize()
    print(f"process_tree: role={role} pid={os.getpid()} kernels={OPS}", flush=True)


def spawn_worker(index):
    launch(f"spawn{index}")


def exit_worker(how):
    launch(f"exit-{how}")
    if how == "os_exit":
        os._exit(0)
    raise RuntimeError("uncaught on purpose")


def main():
    mode = sys.argv[1]
    if mode == "spawn":
        ctx = mp.get_context("spawn")
        workers = [ctx.Process(target=spawn_worker, args=(i,)) for i in range(2)]
    elif mode == "exit":
        ctx = mp.get_context("spawn")
        workers = [ctx.Process(target=exit_worker, args=(how,)) for how in ("os_exit", "raise")]
    elif mode == "fork":
        pid = os.fork()
        if pid == 0:
            launch("forked-child")
            os._exit(0)
        os.waitpid(pid, 0)
        launch("parent")
        return
    else:
        sys.exit(f"unknown mode {mode}")
    for w in workers:
        w.start()
    for w in workers:
        w.join()


if __name__ == "__main__":
    main()
