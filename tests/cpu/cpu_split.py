"""A pure-Python program with a known split of its CPU time, for the CPU profiler's Python
frames (tests/e2e/cpu_python_test.sh): about 70% in hot() and 30% in warm(), each timed by
the program itself with the thread's CPU clock. Prints "cpu_split.py: hot_ns warm_ns"."""
import sys
import time


def spin(seconds):
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        x += 1
    return x


def hot(seconds):
    return spin(seconds)  # line: hot calls spin


def warm(seconds):
    return spin(seconds)  # line: warm calls spin


def main():
    total = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
    rounds = 20
    spent = {"hot": 0, "warm": 0}
    for _ in range(rounds):
        for name, fn, share in (("hot", hot, 0.7), ("warm", warm, 0.3)):
            begin = time.thread_time_ns()
            fn(total * share / rounds)
            spent[name] += time.thread_time_ns() - begin
    print("cpu_split.py: %d %d" % (spent["hot"], spent["warm"]))


if __name__ == "__main__":
    main()
