"""Off-CPU time with a known split between two lines, for Python frames in off-CPU stacks
(tests/e2e/cpu_offcpu_python_test.sh). wait() sleeps; main() calls it from two lines in turn,
so every sleep blocks at the same native place (instruction, stack pointer, system call) and
only the Python frames tell the two apart. Prints "offcpu_waits.py: short_ns long_ns", the
time each line spent in wait(), measured by the program with the monotonic clock."""
import sys
import time


def wait(seconds):
    time.sleep(seconds)  # line: wait sleeps


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    spent = {"short": 0, "long": 0}
    # The profiler finds the interpreter at the first drain after the exec (up to 50 ms):
    # waits before then have no Python frames, so none are measured yet.
    time.sleep(0.2)
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
