#!/usr/bin/env python3
"""Measures and aggregates profiler overhead runs (driven by bench/overhead/run.sh).

  overhead.py measure --runs FILE --workload W --mode M --round R [--timeout S]
                      [--gpuperf BIN --trace-dir DIR | --torch-trace FILE] [--keep] -- CMD...
      Runs CMD once (own process group, killed at the timeout), measures its wall time and the
      peak RSS of the application process, parses the example's summary line and the floor
      tracer's line, then (outside the measured time) counts what the profiler wrote, and
      appends one JSON object to FILE.

  overhead.py aggregate --runs FILE [--machine FILE] [--json OUT] [--table OUT]
      Medians and spreads per workload x mode, ratios to the no-profiler mode; prints the table.

  overhead.py machine --out FILE [--gpuperf BIN] [--python PY]
      Writes the machine, driver, CUDA and tool versions as JSON.

Only the standard library, so it runs on any python3 >= 3.8.
"""

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

SUMMARY_PREFIX = "gpuperf-example:"
FLOOR_RE = re.compile(r"cupti-floor: kernels=(\d+) dropped=(\d+)")
# Stats whose value counts lost data (src/base stats table, severity kDataLoss).
DATA_LOSS_STATS = {
    "cupti_dropped_records",
    "incomplete_records",
    "writer_queue_full",
    "launch_links_dropped",
    "unwind_failed",
    "stack_table_full",
    "write_errors",
}
BASE_MODE = "base"
# Modes in the order the table shows them.
MODE_ORDER = ["base", "floor", "gp_kernel", "gp_act", "gp_all", "torch", "torch_stack"]
MODE_LABELS = {
    "base": "no profiler",
    "floor": "CUPTI floor",
    "gp_kernel": "gpuperf kernels",
    "gp_act": "gpuperf activity",
    "gp_all": "gpuperf all+stacks",
    "torch": "torch.profiler",
    "torch_stack": "torch.profiler+stack",
}


# --------------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------------


def parse_summary(text):
    """Fields of the last 'gpuperf-example:' line in text (numbers as int/float), or {}."""
    found = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith(SUMMARY_PREFIX):
            continue
        fields = {}
        for token in line[len(SUMMARY_PREFIX):].split():
            key, sep, value = token.partition("=")
            if sep:
                fields[key] = _number(value)
        found = fields
    return found


def _number(text):
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def parse_floor(text):
    """(kernels, dropped) from the floor tracer's stderr line, or None."""
    matches = FLOOR_RE.findall(text)
    if not matches:
        return None
    kernels, dropped = matches[-1]
    return int(kernels), int(dropped)


def summarize_dump(lines):
    """Counts from `gpuperf dump` output lines: kernel records, all records, stats.

    A stat may appear more than once per process (periodic snapshots of a running counter):
    the largest value per (pid, stat) is taken, then summed over processes."""
    kernels = 0
    records = None
    stats = {}
    for line in lines:
        if line.startswith("kernel "):
            kernels += 1
        elif line.startswith("stat "):
            fields = dict(
                token.split("=", 1) for token in line.split("#")[0].split()[1:] if "=" in token
            )
            name = line.split("#", 1)[1].strip() if "#" in line else "stat_" + fields.get("stat", "?")
            key = (fields.get("pid", "?"), name)
            value = int(fields.get("value", "0"))
            stats[key] = max(stats.get(key, 0), value)
        elif line.startswith("# files="):
            match = re.search(r"\brecords=(\d+)", line)
            if match:
                records = int(match.group(1))
    totals = {}
    for (_, name), value in stats.items():
        totals[name] = totals.get(name, 0) + value
    drops = sum(value for name, value in totals.items() if name in DATA_LOSS_STATS)
    return {"kernel_records": kernels, "records": records, "stats": totals, "drops": drops}


def directory_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def gpuperf_trace_stats(gpuperf, trace_dir, timeout):
    result = {"bytes": directory_bytes(trace_dir)}
    try:
        proc = subprocess.Popen([gpuperf, "dump", trace_dir], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, errors="replace")
    except OSError as error:
        result["trace_error"] = f"cannot run {gpuperf}: {error}"
        return result
    # Streamed: a dump of a long soak is far larger than the trace.
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        result.update(summarize_dump(proc.stdout))
        err = proc.stderr.read()
        proc.wait()
    finally:
        timer.cancel()
    if proc.returncode != 0:
        result["trace_error"] = f"gpuperf dump exited {proc.returncode}: {err.strip()[-500:]}"
    return result


def torch_trace_stats(path):
    """Size and kernel count of a torch.profiler Chrome trace."""
    result = {"bytes": os.path.getsize(path) if os.path.exists(path) else 0}
    try:
        with open(path) as f:
            events = json.load(f).get("traceEvents", [])
    except (OSError, ValueError) as error:
        result["trace_error"] = f"cannot read {path}: {error}"
        return result
    result["records"] = len(events)
    result["kernel_records"] = sum(1 for e in events if e.get("cat") == "kernel")
    return result


# --------------------------------------------------------------------------------------------
# Measuring one run
# --------------------------------------------------------------------------------------------


def _children(pid):
    kids = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids.extend(int(p) for p in f.read().split())
    except OSError:
        pass
    return kids


def _status(pid):
    name, hwm = "", 0
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Name:"):
                    name = line.split(None, 1)[1].strip()
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except OSError:
        pass
    return name, hwm


class RssWatcher:
    """Polls the process tree under `root` for each process's peak RSS (VmHWM, monotonic),
    so only growth in the last poll interval before a process exits can be missed."""

    def __init__(self, root, interval=0.05):
        self.root = root
        self.interval = interval
        self.peak_by_name = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            pending, seen = [self.root], set()
            while pending:
                pid = pending.pop()
                if pid in seen:
                    continue
                seen.add(pid)
                name, hwm = _status(pid)
                if name:
                    self.peak_by_name[name] = max(self.peak_by_name.get(name, 0), hwm)
                pending.extend(_children(pid))
            self._stop.wait(self.interval)

    def stop(self):
        self._stop.set()
        self._thread.join()

    def app_peak_kb(self):
        """The largest peak among processes that are not gpuperf itself (the application)."""
        peaks = [kb for name, kb in self.peak_by_name.items() if name != "gpuperf"]
        return max(peaks) if peaks else None


def run_measured(cmd, timeout, env=None):
    """Runs cmd in its own process group; returns a dict with rc, status, wall_s, output."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                errors="replace", start_new_session=True, env=env)
    except OSError as error:
        return {"rc": 127, "status": "failed", "wall_s": 0.0, "stdout": "",
                "stderr": f"cannot run {cmd[0]}: {error}", "app_rss_kb": None}
    watcher = RssWatcher(proc.pid)
    status = "ok"
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        status = "timeout"
        _kill_group(proc)
        out, err = proc.communicate()
    wall = time.monotonic() - start
    watcher.stop()
    if status == "ok" and proc.returncode != 0:
        status = "failed"
    return {"rc": proc.returncode, "status": status, "wall_s": wall, "stdout": out,
            "stderr": err, "app_rss_kb": watcher.app_peak_kb()}


def _kill_group(proc):
    for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def cmd_measure(args):
    cmd = args.cmd[1:] if args.cmd and args.cmd[0] == "--" else args.cmd
    if not cmd:
        print("overhead.py measure: no command after --", file=sys.stderr)
        return 2
    if args.trace_dir:
        shutil.rmtree(args.trace_dir, ignore_errors=True)
    run = run_measured(cmd, args.timeout)
    row = {
        "workload": args.workload,
        "mode": args.mode,
        "round": args.round,
        "rc": run["rc"],
        "status": run["status"],
        "wall_s": run["wall_s"],
        "app_rss_kb": run["app_rss_kb"],
        "summary": parse_summary(run["stdout"]),
    }
    floor = parse_floor(run["stderr"])
    if floor:
        row["kernel_records"], row["drops"] = floor
    if args.trace_dir and os.path.isdir(args.trace_dir):
        row.update(gpuperf_trace_stats(args.gpuperf, args.trace_dir, args.timeout))
        if not args.keep:
            shutil.rmtree(args.trace_dir, ignore_errors=True)
    elif args.torch_trace:
        row.update(torch_trace_stats(args.torch_trace))
        if not args.keep and os.path.exists(args.torch_trace):
            os.remove(args.torch_trace)
    if run["status"] != "ok":
        row["stderr_tail"] = run["stderr"][-2000:]
    os.makedirs(os.path.dirname(os.path.abspath(args.runs)), exist_ok=True)
    with open(args.runs, "a") as f:
        f.write(json.dumps(row, sort_keys=True) + "\n")
    line = f"{args.workload:<18} {args.mode:<12} r{args.round} {run['status']:<7} " \
           f"{run['wall_s']:8.3f} s"
    if "app_rss_kb" in row and row["app_rss_kb"]:
        line += f"  rss {row['app_rss_kb'] / 1024:.0f} MiB"
    print(line, flush=True)
    if run["status"] != "ok":
        print(f"  stderr: {run['stderr'][-600:].strip()}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------------------------
# Aggregation
# --------------------------------------------------------------------------------------------


def median(values):
    return statistics.median(values) if values else None


def spread(values):
    """(max - min) / median, as a fraction; None for fewer than two values."""
    if len(values) < 2:
        return None
    mid = statistics.median(values)
    return (max(values) - min(values)) / mid if mid else None


def ratio(value, base):
    return value / base if value is not None and base else None


def _metric(runs, getter):
    values = []
    for run in runs:
        value = getter(run)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            values.append(value)
    return values


def _stat(values):
    return {"median": median(values), "spread": spread(values),
            "min": min(values) if values else None, "max": max(values) if values else None,
            "n": len(values)}


def aggregate(rows):
    """Per (workload, mode): medians, spreads and comparisons with the base mode."""
    groups = {}
    for row in rows:
        groups.setdefault((row["workload"], row["mode"]), []).append(row)

    def mode_rank(mode):
        return MODE_ORDER.index(mode) if mode in MODE_ORDER else len(MODE_ORDER)

    workloads = []
    for row in rows:
        if row["workload"] not in workloads:
            workloads.append(row["workload"])
    results = []
    for workload in workloads:
        modes = sorted({m for (w, m) in groups if w == workload}, key=mode_rank)
        base_ok = [r for r in groups.get((workload, BASE_MODE), []) if r["status"] == "ok"]
        base = {
            "wall_s": median(_metric(base_ok, lambda r: r["wall_s"])),
            "app_ms": median(_metric(base_ok, lambda r: r["summary"].get("wall_ms"))),
            "us_per_launch": median(_metric(base_ok, lambda r: r["summary"].get("us_per_launch"))),
            "rss_kb": median(_metric(base_ok, lambda r: r.get("app_rss_kb"))),
        }
        for mode in modes:
            runs = groups[(workload, mode)]
            ok = [r for r in runs if r["status"] == "ok"]
            entry = {
                "workload": workload,
                "mode": mode,
                "runs": len(runs),
                "failed": len(runs) - len(ok),
                "wall_s": _stat(_metric(ok, lambda r: r["wall_s"])),
                "app_ms": _stat(_metric(ok, lambda r: r["summary"].get("wall_ms"))),
                "us_per_launch": _stat(_metric(ok, lambda r: r["summary"].get("us_per_launch"))),
                "app_rss_kb": _stat(_metric(ok, lambda r: r.get("app_rss_kb"))),
                "records": median(_metric(ok, lambda r: r.get("records"))),
                "kernel_records": median(_metric(ok, lambda r: r.get("kernel_records"))),
                "bytes": median(_metric(ok, lambda r: r.get("bytes"))),
                "drops": max(_metric(ok, lambda r: r.get("drops")), default=None),
                "launches_per_s": median(_metric(ok, lambda r: r["summary"].get("launches_per_s"))),
            }
            expected = median(_metric(ok, lambda r: r["summary"].get("kernels")))
            entry["kernels_expected"] = expected if expected is not None and expected >= 0 else None
            if entry["kernels_expected"] is not None and entry["kernel_records"] is not None:
                entry["kernels_lost"] = entry["kernels_expected"] - entry["kernel_records"]
            else:
                entry["kernels_lost"] = None
            if entry["bytes"] and entry["kernel_records"]:
                entry["bytes_per_kernel"] = entry["bytes"] / entry["kernel_records"]
            else:
                entry["bytes_per_kernel"] = None
            entry["wall_ratio"] = ratio(entry["wall_s"]["median"], base["wall_s"])
            entry["app_ratio"] = ratio(entry["app_ms"]["median"], base["app_ms"])
            upl = entry["us_per_launch"]["median"]
            entry["us_per_launch_added"] = (
                upl - base["us_per_launch"] if upl is not None and base["us_per_launch"] is not None
                else None)
            rss = entry["app_rss_kb"]["median"]
            entry["rss_added_kb"] = (
                rss - base["rss_kb"] if rss is not None and base["rss_kb"] is not None else None)
            results.append(entry)
    return results


def _fmt(value, spec, missing="-"):
    return missing if value is None else format(value, spec)


def _fmt_count(value):
    if value is None:
        return "-"
    value = float(value)
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.2f}{unit}"
    return f"{value:.0f}"


def _fmt_bytes(value):
    if value is None:
        return "-"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= scale:
            return f"{value / scale:.1f} {unit}"
    return f"{value:.0f} B"


def format_table(results):
    header = ["workload", "mode", "runs", "wall s", "±", "x base", "app ms", "x base", "us/launch",
              "+us", "records", "kernels rec/exp", "bytes", "B/kernel", "drops", "+RSS MiB"]
    rows = [header]
    for e in results:
        wall, app, upl = e["wall_s"], e["app_ms"], e["us_per_launch"]
        kernels = "-"
        if e["kernel_records"] is not None or e["kernels_expected"] is not None:
            # Exact: one lost kernel must show.
            kernels = f"{_fmt(e['kernel_records'], '.0f')}/{_fmt(e['kernels_expected'], '.0f')}"
        runs = str(e["runs"]) + (f" ({e['failed']} failed)" if e["failed"] else "")
        rows.append([
            e["workload"], MODE_LABELS.get(e["mode"], e["mode"]), runs,
            _fmt(wall["median"], ".3f"),
            "-" if wall["spread"] is None else f"{wall['spread'] * 100:.1f}%",
            _fmt(e["wall_ratio"], ".3f"),
            _fmt(app["median"], ".1f"),
            _fmt(e["app_ratio"], ".3f"),
            _fmt(upl["median"], ".3f"),
            _fmt(e["us_per_launch_added"], "+.3f"),
            _fmt_count(e["records"]),
            kernels,
            _fmt_bytes(e["bytes"]),
            _fmt(e["bytes_per_kernel"], ".1f"),
            _fmt(e["drops"], ".0f"),
            _fmt(None if e["rss_added_kb"] is None else e["rss_added_kb"] / 1024, "+.1f"),
        ])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = []
    for n, r in enumerate(rows):
        cells = [c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        lines.append("  ".join(cells).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def soak_verdict(results, min_rate=300_000):
    """The soak case: rate reached, records lost and drops, for each soak mode."""
    verdicts = []
    for e in results:
        if e["workload"] != "soak":
            continue
        rate = e["launches_per_s"]
        lost = e["kernels_lost"]
        verdicts.append({
            "mode": e["mode"],
            "launches_per_s": rate,
            "rate_met": rate is not None and rate >= min_rate,
            "kernels_lost": lost,
            "drops": e["drops"],
            "zero_loss": lost == 0 and not e["drops"],
        })
    return verdicts


def cmd_aggregate(args):
    rows = []
    with open(args.runs) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as error:
                print(f"{args.runs}:{number}: not JSON ({error}); skipped", file=sys.stderr)
    results = aggregate(rows)
    machine = {}
    if args.machine and os.path.exists(args.machine):
        with open(args.machine) as f:
            machine = json.load(f)
    soak = soak_verdict(results)
    table = format_table(results)
    lines = []
    if machine:
        lines.append("machine: " + ", ".join(f"{k}={v}" for k, v in machine.items()))
    lines.append(table)
    for s in soak:
        lines.append(
            f"soak ({MODE_LABELS.get(s['mode'], s['mode'])}): "
            f"{_fmt_count(s['launches_per_s'])} launches/s "
            f"({'meets' if s['rate_met'] else 'BELOW'} 300k/s), "
            f"kernels lost {_fmt_count(s['kernels_lost'])}, drops {_fmt_count(s['drops'])}: "
            f"{'zero loss' if s['zero_loss'] else 'LOSS'}")
    text = "\n".join(lines)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "results": results, "soak": soak}, f, indent=2,
                      sort_keys=True)
    if args.table:
        with open(args.table, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0


# --------------------------------------------------------------------------------------------
# Machine description
# --------------------------------------------------------------------------------------------


def _first_line(cmd, pattern=None):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        if line.strip() and (pattern is None or re.search(pattern, line)):
            return line.strip()
    return None


def cmd_machine(args):
    info = {}
    gpu = _first_line(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                       "--format=csv,noheader"])
    if gpu:
        info["gpu"] = gpu
    nvcc = _first_line([os.environ.get("NVCC", "/usr/local/cuda/bin/nvcc"), "--version"],
                       r"release")
    if nvcc:
        info["cuda"] = nvcc
    cpu = None
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), None)
    except OSError:
        pass
    if cpu:
        info["cpu"] = f"{cpu} x{os.cpu_count()}"
    kernel = _first_line(["uname", "-r"])
    if kernel:
        info["kernel"] = kernel
    if args.gpuperf:
        version = _first_line([args.gpuperf, "--version"])
        if version:
            info["gpuperf"] = version
    if args.python:
        torch = _first_line([args.python, "-c",
                             "import torch; print(torch.__version__, torch.version.cuda)"])
        if torch:
            info["torch"] = torch
    with open(args.out, "w") as f:
        json.dump(info, f, indent=2, sort_keys=True)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    m = sub.add_parser("measure", help="run one command and append its measurements")
    m.add_argument("--runs", required=True, help="JSON-lines file to append to")
    m.add_argument("--workload", required=True)
    m.add_argument("--mode", required=True)
    m.add_argument("--round", type=int, required=True)
    m.add_argument("--timeout", type=float, default=300)
    m.add_argument("--gpuperf", default="gpuperf", help="for reading --trace-dir")
    m.add_argument("--trace-dir", help="the gpuperf trace directory this run writes")
    m.add_argument("--torch-trace", help="the torch.profiler Chrome trace this run writes")
    m.add_argument("--keep", action="store_true", help="keep the traces")
    m.add_argument("cmd", nargs=argparse.REMAINDER)
    m.set_defaults(func=cmd_measure)

    a = sub.add_parser("aggregate", help="medians, spreads and ratios; prints the table")
    a.add_argument("--runs", required=True)
    a.add_argument("--machine")
    a.add_argument("--json")
    a.add_argument("--table")
    a.set_defaults(func=cmd_aggregate)

    mc = sub.add_parser("machine", help="describe the machine as JSON")
    mc.add_argument("--out", required=True)
    mc.add_argument("--gpuperf")
    mc.add_argument("--python")
    mc.set_defaults(func=cmd_machine)

    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
