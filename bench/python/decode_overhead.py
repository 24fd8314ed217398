#!/usr/bin/env python3
"""Decode-like PyTorch overhead: gpuperf with Python stacks against torch.profiler (issue 12).

A small GPT-2-shaped `transformers` model with random weights (nothing is downloaded)
decodes greedily with its KV cache: batch <= 4, a short prompt, one token per step, so the
step time is launches and Python, not GPU work. Each mode runs in processes of its own,
round-robin over the modes for several rounds (the order rotates each round); a process
warms up, then times every decode step (synchronized) and reports their median.

  decode_overhead.py run [--rounds R] [--gpuperf BIN] [--out DIR] [--keep-trace DIR]
                         [--dry-run] [model options]
      The whole measurement; writes DIR/decode.json, DIR/decode.txt (the table, also
      printed) and DIR/rows.jsonl (one row per process).
  decode_overhead.py worker --mode MODE --result FILE [model options]
      One process of one mode (run starts these; gpuperf mode runs under `gpuperf record`).
  decode_overhead.py aggregate --rows FILE [--json OUT] [--table OUT]
      The table again from rows.jsonl.

Modes: base (no profiler), gpuperf (`gpuperf record`, stacks with Python frames: the
default), torch (torch.profiler, CPU+CUDA), torch_stack (the same with with_stack=True).
torch.profiler's time to stop and post-process is outside the timed steps, as gpuperf's
writing at exit is; both pay their per-launch costs inside them.

Budget (issue 12): gpuperf <= 1.10x the no-profiler step time, and its added time <= 25% of
torch_stack's. Ratios are paired within a round (each mode against that round's base),
then summarized over rounds: median [min..max].

The measurement to trust is the in-process one (mode gpuperf_ab): on the GPU machine separate
processes differ by up to 2x as a whole, profiled or not. One recorded process switches
levels every 8 steps (see AB_LEVELS below); with
  GPUPERF_AB_LEVELS=detached,kind10,full,torch,torch_stack decode_overhead.py run --modes gpuperf_ab
it alternates no CUPTI at all, CUPTI's kernel records alone, gpuperf, torch.profiler and
torch.profiler(with_stack=True), and prints each against the detached steps, paired per cycle
of blocks, with gpuperf's share of with_stack's added time (tests/gpu/checks/decode.sh).

Only the standard library at the top level: `aggregate` and `run --dry-run` run anywhere.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

MODES = ["base", "gpuperf", "torch", "torch_stack"]
# Modes that split gpuperf's added time into its parts; only run when --modes names them.
EXTRA_MODES = ["gpuperf_native", "gpuperf_nostacks", "gpuperf_ab"]
LABELS = {
    "base": "no profiler",
    "gpuperf": "gpuperf (Python stacks)",
    "torch": "torch.profiler",
    "torch_stack": "torch.profiler(with_stack)",
    "gpuperf_native": "gpuperf --no-python-stacks",
    "gpuperf_nostacks": "gpuperf --no-stacks",
    "gpuperf_ab": "gpuperf, in-process A/B",
}
GPUPERF_FLAGS = {
    "gpuperf": [],
    "gpuperf_native": ["--no-python-stacks"],
    "gpuperf_nostacks": ["--no-stacks"],
    "gpuperf_ab": [],
}
# gpuperf_ab: one recorded process switches recording between these levels every AB_BLOCK
# steps through the injection library's gpuperf_bench_toggle (src/inject/injection.cc):
# everything (the default recording), nothing (CUPTI attached, every kind and callback
# off), native stacks only (no Python frames), the CUPTI floor (kernel records only), the
# recording without stacks, and the recording with whole native stacks (fullnative: not cut
# at the innermost Python call, as GPUPERF_NATIVE_STACKS=full) and the recording that unwinds
# every stack (nomemo: no stack memo, as GPUPERF_STACK_MEMO=off). The first step after a switch
# is not counted. Neighbouring blocks run seconds apart at most, so the differences between
# processes and over time that swamp the separate-process comparison cancel.
AB_LEVELS = [("full", 1), ("none", -1), ("native", 2), ("floor", 0), ("nostacks", 3),
             ("fullnative", 4), ("nomemo", 5)]
# Only where GPUPERF_AB_LEVELS names them: CUPTI detached altogether (cuptiFinalize, the
# process as if not profiled), and torch.profiler without and with stacks, each block its own
# profiling session while gpuperf is detached. With these, one process alternates every
# configuration the budget compares (no profiler, gpuperf, torch.profiler, with_stack).
# nocallbacks, subscriber and activityapi tell where an idle CUPTI's cost lies: attached with no
# callback enabled at all; detached but for a subscriber with none enabled; detached but for
# the activity API's buffer callbacks (src/inject/cupti/bench_toggle.cc).
# synckind: the recording with CUPTI's SYNCHRONIZATION kind on as well, as before session 11
# (its cost stays after it is switched off: follow it with detached).
# idlecallbacks: the recording's kinds and callbacks, every callback returning at once (CUPTI's
# cost of calling them); nodriver: the recording without its driver-API callbacks;
# noautograd: the recording without PyTorch's autograd link (train_overhead.py).
AB_OPTIONAL_LEVELS = [("detached", -2), ("torch", "torch"), ("torch_stack", "torch_stack"),
                      ("nocallbacks", -4), ("subscriber", -5), ("activityapi", -6),
                      ("synckind", 6), ("idlecallbacks", 7), ("nodriver", 8),
                      ("noautograd", 9)]
# Every level by name (the benchmark hook's values): the ones above; kinds, gpuperf's activity
# kinds without its callbacks; kindK, CUPTI activity kind K alone; without_G, the recording
# without activity group G (base/activities.h), attached afresh. launch_cost.py names its
# levels from it too.
LEVEL_VALUES = dict(AB_LEVELS + AB_OPTIONAL_LEVELS)
LEVEL_VALUES["kinds"] = -100
LEVEL_VALUES.update({f"kind{k}": -100 - k for k in range(1, 64)})
LEVEL_VALUES.update({f"without_{g}": -200 - bit for bit, g in enumerate(
    ["kernel", "memcpy", "memset", "runtime", "driver", "sync", "memory", "nvtx", "overhead",
     "graph"])})


def level_value(name):
    """The hook's value for a level name, or None. A name may repeat with a suffix (none.2):
    the same level, its own blocks, e.g. to see whether a level's blocks depend on the level
    before them."""
    return LEVEL_VALUES.get(name.split(".")[0])


# GPUPERF_AB_LEVELS=full,native,none: only these levels, in this order: more steps for each,
# to resolve a small difference between two of them.
if os.environ.get("GPUPERF_AB_LEVELS"):
    AB_LEVELS = [(name, level_value(name)) for name in os.environ["GPUPERF_AB_LEVELS"].split(",")
                 if level_value(name) is not None]
AB_BLOCK = 8
BUDGET_RATIO = 1.10
BUDGET_PCT_OF_STACK = 25.0


def model_options(parser):
    group = parser.add_argument_group("model and decode")
    group.add_argument("--layers", type=int, default=4, help="n_layer (default 4)")
    group.add_argument("--embd", type=int, default=384, help="n_embd (default 384)")
    group.add_argument("--heads", type=int, default=6, help="n_head (default 6)")
    group.add_argument("--vocab", type=int, default=8192, help="vocab_size (default 8192)")
    group.add_argument("--batch", type=int, default=4, help="sequences (default 4, at most 4)")
    group.add_argument("--prompt", type=int, default=16, help="prompt tokens (default 16)")
    group.add_argument("--tokens", type=int, default=96, help="tokens decoded per pass (96)")
    group.add_argument("--warmup", type=int, default=2, help="untimed passes first (2)")
    group.add_argument("--passes", type=int, default=6, help="timed passes (6)")
    group.add_argument("--dtype", choices=["float16", "bfloat16", "float32"], default="float16")


def model_args(args):
    return [f"--layers={args.layers}", f"--embd={args.embd}", f"--heads={args.heads}",
            f"--vocab={args.vocab}", f"--batch={args.batch}", f"--prompt={args.prompt}",
            f"--tokens={args.tokens}", f"--warmup={args.warmup}", f"--passes={args.passes}",
            f"--dtype={args.dtype}"]


# --------------------------------------------------------------------------------------------
# One process of one mode
# --------------------------------------------------------------------------------------------


def build_model(args, torch):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(0)
    config = GPT2Config(n_layer=args.layers, n_embd=args.embd, n_head=args.heads,
                        vocab_size=args.vocab, n_positions=args.prompt + args.tokens + 8)
    model = GPT2LMHeadModel(config)  # random weights
    return model.to(device="cuda", dtype=getattr(torch, args.dtype)).eval()


def decode_pass(model, prompt, tokens, torch, step_ms, cpu_ms=None, before_step=None):
    """Greedy decode with the KV cache; appends each step's milliseconds to step_ms, and the
    launching thread's CPU milliseconds to cpu_ms (a machine whose other load takes the
    thread's core lengthens the wall time but not this)."""
    out = model(input_ids=prompt, use_cache=True)
    past = out.past_key_values
    next_ids = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
    torch.cuda.synchronize()
    for _ in range(tokens):
        if before_step is not None:
            before_step()
        start = time.perf_counter()
        start_cpu = time.thread_time()
        out = model(input_ids=next_ids, past_key_values=past, use_cache=True)
        past = out.past_key_values
        next_ids = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
        torch.cuda.synchronize()  # as generate() does each step, to test for the end
        step_ms.append((time.perf_counter() - start) * 1e3)
        if cpu_ms is not None:
            cpu_ms.append((time.thread_time() - start_cpu) * 1e3)
    return next_ids


def run_worker(args):
    import torch

    if not torch.cuda.is_available():
        print("decode_overhead: no CUDA device", file=sys.stderr)
        return 1
    if args.batch > 4:
        print("decode_overhead: --batch is at most 4 (launch-bound decode)", file=sys.stderr)
        return 2
    model = build_model(args, torch)
    generator = torch.Generator(device="cpu").manual_seed(1)
    prompt = torch.randint(0, args.vocab, (args.batch, args.prompt), generator=generator).cuda()

    cpu_steps = []
    ab = ABSchedule(torch) if args.mode == "gpuperf_ab" else None
    if ab is not None and not ab.ready():
        print("decode_overhead: gpuperf_ab needs gpuperf record's injection library "
              "(gpuperf_bench_toggle)", file=sys.stderr)
        return 1

    def measure():
        steps = []
        with torch.no_grad():
            for _ in range(args.warmup):
                decode_pass(model, prompt, args.tokens, torch, [])
            for _ in range(args.passes):
                decode_pass(model, prompt, args.tokens, torch, steps, cpu_steps,
                            ab.before_step if ab is not None else None)
        return steps

    started = time.perf_counter()
    if args.mode in ("torch", "torch_stack"):
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities,
                                    with_stack=args.mode == "torch_stack") as prof:
            steps = measure()
        events = len(prof.events())
    else:
        steps = measure()
        events = None
    ab_result = None
    if ab is not None:
        ab.finish()
        ab_result = ab.summary(steps)
        steps = ab_result["steps_ms"]["full"]
    row = {
        "mode": args.mode,
        "round": args.round,
        "status": "ok",
        "step_ms_median": statistics.median(steps),
        "step_ms_p10": quantile(steps, 0.1),
        "step_ms_p90": quantile(steps, 0.9),
        "step_cpu_ms_median": statistics.median(cpu_steps),
        "steps": len(steps),
        "process_s": time.perf_counter() - started,
        "torch_events": events,
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "device": torch.cuda.get_device_name(0),
    }
    if ab_result is not None:
        row["ab"] = {k: v for k, v in ab_result.items() if k != "steps_ms"}
        row["step_cpu_ms_median"] = None  # the steps of all three levels
    with open(args.result, "w") as f:
        json.dump(row, f)
    return 0


def block_cycles(blocks, block_medians):
    """Cycle number -> {level: its block's median}: each cycle holds one block of every level
    of AB_LEVELS, seconds apart at most."""
    cycles = {}
    for b, (level, median) in zip(blocks, block_medians):
        cycles.setdefault(b // len(AB_LEVELS), {})[level] = median
    return cycles


def paired_ratio(cycles, name, base):
    """The median over cycles of level `name`'s block median over level `base`'s, or None."""
    ratios = [c[name] / c[base] for c in cycles.values() if name in c and base in c]
    return statistics.median(ratios) if ratios else None


class ABSchedule:
    """Switches the recording level before steps and labels each step with its level."""

    def __init__(self, torch=None):
        import ctypes

        self.fn = None
        self.torch = torch
        path = os.environ.get("CUDA_INJECTION64_PATH")
        if path:
            try:  # the injection library is already loaded (by libcuda, at cuInit)
                lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
                self.fn = lib.gpuperf_bench_toggle
                self.fn.argtypes = [ctypes.c_int]
                self.fn.restype = ctypes.c_int
            except (OSError, AttributeError):
                self.fn = None
        self.step = 0
        self.labels = []  # per timed step: the level, or None for the step after a switch
        self.profiler = None  # the torch.profiler session of a torch level's block

    def ready(self):
        return self.fn is not None

    def toggle(self, value):
        if self.profiler is not None:  # its session ends with its block
            self.profiler.stop()
            self.profiler = None
            # torch.profiler keeps its CUPTI subscriber after the session, and CUPTI has one
            # slot: -3 finalizes CUPTI with it, so that gpuperf can attach again.
            self.check(self.fn(-3), -3)
        if isinstance(value, str):  # torch.profiler, with gpuperf out of CUPTI's way
            self.check(self.fn(-2), value)
            activities = [self.torch.profiler.ProfilerActivity.CPU,
                          self.torch.profiler.ProfilerActivity.CUDA]
            self.profiler = self.torch.profiler.profile(activities=activities,
                                                        with_stack=value == "torch_stack")
            self.profiler.start()
        else:
            self.check(self.fn(value), value)

    @staticmethod
    def check(status, value):
        if status != 0:
            raise RuntimeError(f"gpuperf_bench_toggle({value!r}) failed ({status}): gpuperf "
                               "could not attach CUPTI again (another client kept it?)")

    def before_step(self):
        block, offset = divmod(self.step, AB_BLOCK)
        name, value = AB_LEVELS[block % len(AB_LEVELS)]
        if offset == 0:
            self.toggle(value)
        self.labels.append(None if offset == 0 else (block, name))
        self.step += 1

    def summary(self, steps):
        by_level = {name: [] for name, _ in AB_LEVELS}
        by_block = {}  # block number -> (level, its steps)
        for label, ms in zip(self.labels, steps):
            if label is not None:
                by_level[label[1]].append(ms)
                by_block.setdefault(label[0], (label[1], []))[1].append(ms)
        medians = {name: statistics.median(v) for name, v in by_level.items() if v}
        blocks = sorted(by_block)
        block_medians = [[by_block[b][0], statistics.median(by_block[b][1])] for b in blocks]
        result = {"steps_ms": by_level, "block": AB_BLOCK,
                  "median_ms": medians, "steps": {k: len(v) for k, v in by_level.items()},
                  "block_medians": block_medians}
        # Paired: each cycle of blocks (one of every level, seconds apart at most) gives the
        # ratio of a level's block median to the base block's of the same cycle; the median
        # of those ratios. A slow spell of the machine then weighs on one cycle's ratios, not
        # on one level's median.
        cycles = block_cycles(blocks, block_medians)
        # Against "none" (CUPTI attached, idle) as before, and against "detached" (no CUPTI
        # at all) where it ran: its keys end in _detached.
        for base, suffix in (("none", ""), ("detached", "_detached")):
            if not medians.get(base):
                continue
            for name in medians:
                if name == base:
                    continue
                result[f"{name}_over_{base}"] = medians[name] / medians[base]
                ratio = paired_ratio(cycles, name, base)
                if ratio is not None:
                    result[f"{name}_paired{suffix}"] = ratio
        # gpuperf's added time as a share of with_stack's, paired per cycle (the budget's
        # second number), against the process with no CUPTI.
        shares = [100.0 * (c["full"] - c["detached"]) / (c["torch_stack"] - c["detached"])
                  for c in cycles.values()
                  if all(k in c for k in ("full", "detached", "torch_stack"))
                  and c["torch_stack"] > c["detached"]]
        if shares:
            result["full_pct_of_torch_stack"] = statistics.median(shares)
        # Against CUPTI's kernel records alone (kind10, the least a CUPTI tracer pays).
        floor = paired_ratio(cycles, "full", "kind10")
        if floor is not None:
            result["full_over_kernel_records_paired"] = floor
        return result

    def finish(self):
        self.toggle(1)


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


# --------------------------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------------------------


def round_order(round_index, modes=MODES):
    """Modes in round-robin order, rotated by one each round (no mode always goes first)."""
    shift = round_index % len(modes)
    return modes[shift:] + modes[:shift]


def worker_command(args, mode, round_index, result, trace_dir):
    worker = [sys.executable, os.path.abspath(__file__), "worker", "--mode", mode,
              "--round", str(round_index), "--result", result] + model_args(args)
    if mode in GPUPERF_FLAGS:
        worker = ([args.gpuperf, "record", "-o", trace_dir, "--force", "--quiet"] +
                  GPUPERF_FLAGS[mode] + ["--"] + worker)
    # --pin-cpu: every mode's process, threads and children on the same CPUs, so that a
    # process cannot land on a core another tenant keeps busy (separate processes on the GPU
    # machine ran 1x or 2x as fast as a whole, profiled or not: docs/performance.md).
    return (["taskset", "-c", args.pin_cpu] + worker) if args.pin_cpu else worker


def run_driver(args):
    out = args.out
    rows_path = os.path.join(out, "rows.jsonl")
    if not args.dry_run:
        os.makedirs(out, exist_ok=True)
        open(rows_path, "w").close()
    for round_index in range(1, args.rounds + 1):
        for mode in round_order(round_index, args.modes):
            result = os.path.join(out, f"r{round_index}.{mode}.json")
            trace_dir = os.path.join(out, "trace.tmp")
            if args.keep_trace:  # the default mode's trace where asked, the others beside it
                trace_dir = args.keep_trace + ("" if mode == "gpuperf" else "." + mode)
            cmd = worker_command(args, mode, round_index, result, trace_dir)
            if args.dry_run:
                print(f"r{round_index} {mode:<12} {' '.join(cmd)}")
                continue
            print(f"decode_overhead: round {round_index} {mode}", file=sys.stderr, flush=True)
            row = run_one(cmd, result, mode, round_index, args.timeout)
            with open(rows_path, "a") as f:
                f.write(json.dumps(row) + "\n")
            if mode in GPUPERF_FLAGS and not args.keep_trace:
                shutil.rmtree(trace_dir, ignore_errors=True)
    if args.dry_run:
        return 0
    return write_outputs(read_rows(rows_path), os.path.join(out, "decode.json"),
                         os.path.join(out, "decode.txt"))


def worker_environment():
    """Every mode's process gets one CPU thread per math library. The decode runs on the GPU;
    OpenBLAS's and OpenMP's idle workers otherwise spin on cores the launching thread needs
    (on the H100 machine they used 3.8 s of CPU in an 8 s process), which made the same mode's
    step time vary by 1.5x from process to process."""
    env = dict(os.environ)
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, "1")
    return env


def run_one(cmd, result, mode, round_index, timeout):
    if os.path.exists(result):
        os.remove(result)
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              timeout=timeout, env=worker_environment())
        status = proc.returncode
        tail = (proc.stderr or "")[-600:]
    except subprocess.TimeoutExpired:
        status, tail = "timeout", ""
    wall_s = time.perf_counter() - started
    if status == 0 and os.path.exists(result):
        with open(result) as f:
            row = json.load(f)
        row["wall_s"] = wall_s
        return row
    print(f"decode_overhead: {mode} round {round_index} failed ({status}): {tail}",
          file=sys.stderr)
    return {"mode": mode, "round": round_index, "status": f"failed: {status}", "wall_s": wall_s,
            "stderr_tail": tail}


def read_rows(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


# --------------------------------------------------------------------------------------------
# Aggregation (pure: tested without a GPU by tests/e2e/decode_harness_test.sh)
# --------------------------------------------------------------------------------------------


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def aggregate(rows):
    """Per mode: step time over rounds; per round, each mode against that round's base."""
    ok = [r for r in rows if r.get("status") == "ok"]
    by_round = {}
    for row in ok:
        by_round.setdefault(row["round"], {})[row["mode"]] = row["step_ms_median"]
    result = {"modes": {}, "failed": [f"{r['mode']} r{r['round']}" for r in rows
                                      if r.get("status") != "ok"]}
    by_round_cpu = {}
    for row in ok:
        if row.get("step_cpu_ms_median") is not None:
            by_round_cpu.setdefault(row["round"], {})[row["mode"]] = row["step_cpu_ms_median"]
    result["cpu_ratio"] = {}
    for mode in MODES[1:] + EXTRA_MODES:  # base against itself says nothing
        ratios = [modes[mode] / modes["base"] for modes in by_round_cpu.values()
                  if mode in modes and modes.get("base")]
        if ratios:
            result["cpu_ratio"][mode] = spread(ratios)
    for mode in MODES + EXTRA_MODES:
        steps = [modes[mode] for modes in by_round.values() if mode in modes]
        ratios = [modes[mode] / modes["base"] for modes in by_round.values()
                  if mode in modes and modes.get("base")]
        added = [modes[mode] - modes["base"] for modes in by_round.values()
                 if mode in modes and "base" in modes]
        if steps:
            result["modes"][mode] = {"step_ms": spread(steps), "ratio": spread(ratios),
                                     "added_ms": spread(added)}
    # gpuperf's added time as a share of with_stack's, paired within each round.
    shares = []
    for modes in by_round.values():
        if all(m in modes for m in ("base", "gpuperf", "torch_stack")):
            stack_added = modes["torch_stack"] - modes["base"]
            if stack_added > 0:
                shares.append(100.0 * (modes["gpuperf"] - modes["base"]) / stack_added)
    result["gpuperf_pct_of_with_stack"] = spread(shares)
    gp_ratio = result["modes"].get("gpuperf", {}).get("ratio")
    share = result["gpuperf_pct_of_with_stack"]
    result["budget"] = {
        "ratio_limit": BUDGET_RATIO,
        "pct_of_with_stack_limit": BUDGET_PCT_OF_STACK,
        "ratio_ok": gp_ratio is not None and gp_ratio["median"] <= BUDGET_RATIO,
        "pct_ok": share is not None and share["median"] <= BUDGET_PCT_OF_STACK,
    }
    return result


def fmt_spread(s, pattern):
    if s is None:
        return "-"
    return f"{pattern.format(s['median'])} [{pattern.format(s['min'])}..{pattern.format(s['max'])}]"


def table(result, rows):
    ok = [r for r in rows if r.get("status") == "ok"]
    first = ok[0] if ok else {}
    lines = [f"Decode-like step time ({first.get('device', '?')}, torch {first.get('torch', '?')}, "
             f"Python {first.get('python', '?')}); median [min..max] over rounds, ratios paired "
             "within a round:",
             f"  {'mode':<27} {'step ms':<24} {'x no profiler':<24} added ms"]
    for mode in MODES + EXTRA_MODES:
        entry = result["modes"].get(mode)
        if entry is None:
            continue
        lines.append(f"  {LABELS[mode]:<27} {fmt_spread(entry['step_ms'], '{:.3f}'):<24} "
                     f"{fmt_spread(entry['ratio'], '{:.2f}'):<24} "
                     f"{fmt_spread(entry['added_ms'], '{:+.3f}')}")
    for row in ok:
        ab = row.get("ab")
        if ab and ab.get("full_over_none"):
            m = ab["median_ms"]
            parts = ", ".join(f"{name} {m[name]:.3f} ms ({ab[name + '_over_none']:.3f}x"
                              + (f", paired {ab[name + '_paired']:.3f}x" if name + "_paired" in ab
                                 else "") + ")"
                              for name in m if name != "none")
            lines.append(f"  in-process A/B, round {row['round']}: none {m['none']:.3f} ms; "
                         + parts)
        if ab and ab.get("full_over_detached"):
            m = ab["median_ms"]
            parts = ", ".join(f"{name} {ab[name + '_over_detached']:.3f}x"
                              + (f" (paired {ab[name + '_paired_detached']:.3f}x)"
                                 if name + "_paired_detached" in ab else "")
                              for name in m if name != "detached")
            line = (f"  in-process A/B, round {row['round']}, x CUPTI detached "
                    f"({m['detached']:.3f} ms): {parts}")
            if "full_pct_of_torch_stack" in ab:
                line += (f"; gpuperf's added time {ab['full_pct_of_torch_stack']:.1f}% of "
                         "with_stack's (paired)")
            if "full_over_kernel_records_paired" in ab:
                line += (f"; gpuperf {ab['full_over_kernel_records_paired']:.3f}x of CUPTI's "
                         "kernel records alone (paired)")
            lines.append(line)
    if result.get("cpu_ratio"):
        lines.append("  launching thread's CPU time per step, x no profiler: " + "; ".join(
            f"{LABELS[m]} {fmt_spread(r, '{:.2f}')}" for m, r in result["cpu_ratio"].items()))
    share = result["gpuperf_pct_of_with_stack"]
    lines.append(f"gpuperf's added time as % of with_stack's: {fmt_spread(share, '{:.1f}')}")
    budget = result["budget"]
    gp = result["modes"].get("gpuperf", {}).get("ratio")
    lines.append(
        f"budget: gpuperf <= {budget['ratio_limit']:.2f}x: "
        f"{'yes' if budget['ratio_ok'] else 'no'} ({fmt_spread(gp, '{:.2f}')}); "
        f"<= {budget['pct_of_with_stack_limit']:.0f}% of with_stack's added time: "
        f"{'yes' if budget['pct_ok'] else 'no'}")
    if result["failed"]:
        lines.append("failed runs: " + ", ".join(result["failed"]))
    return "\n".join(lines) + "\n"


def write_outputs(rows, json_path, table_path):
    result = aggregate(rows)
    text = table(result, rows)
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"result": result, "rows": rows}, f, indent=1)
    if table_path:
        with open(table_path, "w") as f:
            f.write(text)
    sys.stdout.write(text)
    return 0 if not result["failed"] and "gpuperf" in result["modes"] else 1


# --------------------------------------------------------------------------------------------


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="every mode in alternation, then the table")
    run.add_argument("--rounds", type=int, default=3)
    run.add_argument("--gpuperf", default=os.environ.get("GPUPERF", "gpuperf"))
    run.add_argument("--out", default="decode-out")
    run.add_argument("--keep-trace", help="keep gpuperf's last trace here")
    run.add_argument("--timeout", type=float, default=300.0, help="per process (s)")
    run.add_argument("--dry-run", action="store_true", help="print the processes in order")
    run.add_argument("--pin-cpu", metavar="LIST",
                     help="run every process on these CPUs (taskset -c LIST, e.g. 4-7)")
    run.add_argument("--modes", default=",".join(MODES),
                     help="comma-separated modes, of " + ", ".join(MODES + EXTRA_MODES) +
                     " (default: the first four; base is always run)")
    model_options(run)
    worker = sub.add_parser("worker", help="one process of one mode")
    worker.add_argument("--mode", choices=MODES + EXTRA_MODES, required=True)
    worker.add_argument("--round", type=int, default=0)
    worker.add_argument("--result", required=True)
    model_options(worker)
    agg = sub.add_parser("aggregate", help="the table from rows.jsonl")
    agg.add_argument("--rows", required=True)
    agg.add_argument("--json")
    agg.add_argument("--table")
    args = parser.parse_args(argv)
    if args.command == "run":
        if args.rounds < 1:
            parser.error("--rounds wants a positive number")
        modes = [m for m in args.modes.split(",") if m]
        unknown = [m for m in modes if m not in MODES + EXTRA_MODES]
        if unknown:
            parser.error(f"--modes: unknown mode {unknown[0]!r}")
        args.modes = ["base"] + [m for m in modes if m != "base"]
        return run_driver(args)
    if args.command == "worker":
        return run_worker(args)
    return write_outputs(read_rows(args.rows), args.json, args.table)


if __name__ == "__main__":
    sys.exit(main())
