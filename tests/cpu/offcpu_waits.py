"""Off-CPU time with a known split between two lines, for Python frames in off-CPU stacks
(tests/e2e/cpu_offcpu_python_test.sh). wait() sleeps; main() calls it from two lines in turn,
so every sleep blocks at the same native place (instruction, stack pointer, system call) and
only the Python frames tell the two apart. Prints "offcpu_waits.py: short_ns long_ns", the
time each line spent in wait(), measured by the program with the monotonic clock around the
calls; what each line asked to sleep is rounds x 20 ms and rounds x 50 ms."""
import os
import sys
import time


def wait(seconds):
    time.sleep(seconds)  # line: wait sleeps


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    spent = {"short": 0, "long": 0}
    # The profiler finds the interpreter some time after the exec (at a drain of its ring):
    # waits before then have no Python frames. The test creates the file named by argv[2]
    # once `record --verbose` says it found it.
    if len(sys.argv) > 2:
        for _ in range(6000):
            if os.path.exists(sys.argv[2]):
                break
            time.sleep(0.01)
    for _ in range(rounds):
        begin = time.monotonic_ns()
        wait(0.02)  # line: short wait
        spent["short"] += time.monotonic_ns() - begin
        begin = time.monotonic_ns()
        wait(0.05)  # line: long wait
        spent["long"] += time.monotonic_ns() - begin
    print("offcpu_waits.py: %d %d" % (spent["short"], spent["long"]))


if __name__ == "__main__":
    main()
