"""Launches from two lines of one function, in alternation, for about a second, for
launch_stacks_test.sh's stack-memo section. Both lines reach the fake CUDA launch through
the same native frames at the same stack depth; only their Python frames differ. Once the
unwind tables are built, the launches repeat from the same places, so the thread's stack
memo answers most of them: each kernel must still carry its own line (the lines marked
"# line:" are looked up by the test).

Usage: python3 launch_memo.py DIR_OF_THE_EXTENSION
"""
import sys
import time

sys.path.insert(0, sys.argv[1])
import _gpuperf_fakecuda as cuda  # noqa: E402


def launch(step):
    if step % 2 == 0:
        cuda.launch("_Z4evenv")  # line:even
    else:
        cuda.launch("_Z3oddv")  # line:odd


def main():
    cuda.init()
    deadline = time.monotonic() + 1.0
    step = 0
    # Batches of 100 with a pause between: the tables get built meanwhile, and the trace
    # stays small (~20,000 launches).
    while time.monotonic() < deadline:
        for _ in range(100):
            launch(step)
            step += 1
        time.sleep(0.005)
    cuda.synchronize()
    print(f"launch_memo: {step} launches")


main()
