#!/usr/bin/env python3
"""The zero-loss soak (issue 13): examples/launch_bound flat out from many threads and
streams, with no profiler (the RSS baseline, shorter), under the CUPTI floor tracer and
under `gpuperf record` with default settings, one after the other in the same run.

  soak.py --gpuperf BIN --launch-bound EXE [--floor LIB] [--seconds 60] [--threads 16]
          [--streams 4] [--base-seconds 10] [--work DIR] [--json OUT]

Prints one row per mode: launch rate, kernels launched (the example's own count), kernels
recorded, dropped, the application's peak RSS and what the profiler added to it (over the
run without one). Exits 1 when gpuperf lost anything or recorded fewer kernels than were
launched. Peak RSS comes from bench/overhead/overhead.py's watcher (VmHWM of the process
tree, polled). Only the standard library.
"""

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench", "overhead"))
import overhead  # noqa: E402  (run_measured, parse_summary, parse_floor)

KERNELS_RE = re.compile(r"^  kernels\s+([\d,]+)", re.M)
LOST_RE = re.compile(r"^  LOST\s+(.*)$", re.M)
# "12,345 activity records CUPTI dropped (...), 3 ..." -> the counts
LOST_COUNT_RE = re.compile(r"(?:^|, )([\d,]+) ")
NOTICE_RE = re.compile(r"^gpuperf\[\d+\]: (.*)$", re.M)


def count(text):
    return int(text.replace(",", ""))


def run_mode(mode, cmd, timeout):
    run = overhead.run_measured(cmd, timeout)
    summary = overhead.parse_summary(run["stdout"])
    row = {
        "mode": mode,
        "rc": run["rc"],
        "status": run["status"],
        "wall_s": round(run["wall_s"], 1),
        "rate": summary.get("launches_per_s"),
        "launched": summary.get("kernels"),
        "recorded": None,
        "dropped": None,
        "peak_rss_kb": run["app_rss_kb"],
        "notes": [],
    }
    err = run["stderr"]
    if mode == "floor":
        floor = overhead.parse_floor(err)
        if floor:
            row["recorded"], row["dropped"] = floor
    elif mode == "gpuperf":
        kernels = KERNELS_RE.search(err)
        if kernels:
            row["recorded"] = count(kernels.group(1))
        lost = LOST_RE.search(err)
        row["dropped"] = sum(count(c) for c in LOST_COUNT_RE.findall(lost.group(1))) if lost else 0
        if lost:
            row["notes"].append("LOST " + lost.group(1))
        row["notes"] += NOTICE_RE.findall(err)
    if run["status"] != "ok":
        row["notes"].append(f"{run['status']} (exit {run['rc']}): {err.strip()[-300:]}")
    return row


def fmt(value, spec=","):
    return "-" if value is None else format(value, spec)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpuperf", required=True)
    parser.add_argument("--launch-bound", required=True)
    parser.add_argument("--floor", help="libcupti_floor.so (absolute path); row skipped if absent")
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--base-seconds", type=int, default=10)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--work", default="/tmp/gpuperf-soak")
    parser.add_argument("--json")
    args = parser.parse_args()

    load = [args.launch_bound, "--threads", str(args.threads), "--streams", str(args.streams)]
    timeout = args.seconds + 240
    rows = [run_mode("base", load + ["--seconds", str(args.base_seconds)], timeout)]
    if args.floor and os.path.exists(args.floor):
        rows.append(run_mode("floor", ["env", f"CUDA_INJECTION64_PATH={args.floor}"] + load +
                             ["--seconds", str(args.seconds)], timeout))
    trace = os.path.join(args.work, "soak-trace")
    rows.append(run_mode("gpuperf", [args.gpuperf, "record", "-o", trace, "--force", "--"] + load +
                         ["--seconds", str(args.seconds)], timeout))

    base_rss = rows[0]["peak_rss_kb"]
    for row in rows:
        rss = row["peak_rss_kb"]
        row["added_rss_kb"] = rss - base_rss if rss is not None and base_rss is not None else None

    print(f"soak: launch_bound --threads {args.threads} --streams {args.streams}, "
          f"{args.seconds} s (no profiler: {args.base_seconds} s, for the RSS baseline)")
    header = f"  {'mode':<8} {'launches/s':>11} {'launched':>13} {'recorded':>13} {'dropped':>10} " \
             f"{'peak RSS':>10} {'added RSS':>10}"
    print(header)
    for r in rows:
        rss = None if r["peak_rss_kb"] is None else f"{r['peak_rss_kb'] / 1024:.0f} MiB"
        added = None if r["added_rss_kb"] is None else f"{r['added_rss_kb'] / 1024:+.0f} MiB"
        print(f"  {r['mode']:<8} {fmt(r['rate']):>11} {fmt(r['launched']):>13} "
              f"{fmt(r['recorded']):>13} {fmt(r['dropped']):>10} {rss or '-':>10} {added or '-':>10}")
        for note in r["notes"]:
            print(f"    {r['mode']}: {note}")

    gp = rows[-1]
    ok = (gp["status"] == "ok" and gp["dropped"] == 0 and gp["launched"] is not None
          and gp["recorded"] == gp["launched"])
    print(f"soak verdict: {'PASS' if ok else 'FAIL'}: gpuperf recorded "
          f"{fmt(gp['recorded'])} of {fmt(gp['launched'])} kernels, dropped {fmt(gp['dropped'])}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "streams": args.streams,
                       "seconds": args.seconds, "rows": rows, "pass": ok}, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
