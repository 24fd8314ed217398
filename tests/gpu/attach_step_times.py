#!/usr/bin/env python3
"""Step times of a program before, during and after gpuperf attach windows (the GPU check
tests/gpu/checks/attach.sh), paired per round.

usage: attach_step_times.py NAME STEPS_FILE ROUNDS_FILE [--json OUT]
  STEPS_FILE   "END_NS STEP_NS" per step (attach_loop.py, attach_steps.cu)
  ROUNDS_FILE  per round one line "BEFORE_FROM BEFORE_TO WINDOW_FROM WINDOW_TO AFTER_FROM
               AFTER_TO" (CLOCK_MONOTONIC ns): the window is the trace's own (its process
               record's start and end), before ends when gpuperf attach started, after begins
               when it ended

Prints one line per round (median step time in each part, after/before and during/before)
and a verdict line "attach-steps NAME: PASS|FAIL ...": PASS when in every round the median
step after the window is within 5% of the median step before it (the process is back at its
unprofiled speed) and each part has at least 10 steps.
"""
import json
import statistics
import sys

TOLERANCE = 1.05
MIN_STEPS = 10


def steps_between(steps, start, end):
    return [length for finished, length in steps if start <= finished - length and finished <= end]


def main():
    args = sys.argv[1:]
    out = None
    if "--json" in args:
        at = args.index("--json")
        out = args[at + 1]
        del args[at:at + 2]
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    name, steps_file, rounds_file = args
    steps = []
    with open(steps_file) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2:
                steps.append((int(parts[0]), int(parts[1])))
    rounds = []
    with open(rounds_file) as f:
        for line in f:
            values = [int(v) for v in line.split()]
            if len(values) == 6:
                rounds.append(values)
    problems, rows = [], []
    for number, (b0, b1, w0, w1, a0, a1) in enumerate(rounds, 1):
        parts = {"before": steps_between(steps, b0, b1), "during": steps_between(steps, w0, w1),
                 "after": steps_between(steps, a0, a1)}
        row = {"round": number}
        for part, values in parts.items():
            row[part + "_steps"] = len(values)
            row[part + "_ms"] = statistics.median(values) / 1e6 if values else float("nan")
            if len(values) < MIN_STEPS:
                problems.append(f"round {number}: {len(values)} steps {part}")
        row["after_over_before"] = row["after_ms"] / row["before_ms"]
        row["during_over_before"] = row["during_ms"] / row["before_ms"]
        if not row["after_over_before"] <= TOLERANCE:
            problems.append(f"round {number}: after/before {row['after_over_before']:.3f}")
        rows.append(row)
        print(f"attach-steps {name} round {number}: median step before {row['before_ms']:.3f} ms "
              f"({row['before_steps']} steps), during {row['during_ms']:.3f} ms "
              f"({row['during_steps']}), after {row['after_ms']:.3f} ms ({row['after_steps']}); "
              f"after/before {row['after_over_before']:.3f}, during/before {row['during_over_before']:.3f}")
    if not rows:
        problems.append("no rounds")
    if out:
        with open(out, "w") as f:
            json.dump({"name": name, "rounds": rows, "problems": problems}, f, indent=1)
    summary = ", ".join(f"r{r['round']} after/before {r['after_over_before']:.3f} "
                        f"during/before {r['during_over_before']:.3f}" for r in rows)
    print(f"attach-steps {name}: {'FAIL ' + '; '.join(problems) if problems else 'PASS'} ({summary})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
