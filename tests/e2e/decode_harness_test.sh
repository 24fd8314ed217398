#!/usr/bin/env bash
# The decode-like overhead harness (bench/python/decode_overhead.py) without a GPU: the
# processes run round-robin with the order rotating each round, gpuperf's under `gpuperf
# record`; the aggregation pairs each mode with its round's base, and the share of
# with_stack's added time and the budget verdicts come out of known rows as computed by hand.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
script=$SRC/bench/python/decode_overhead.py
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

# --- dry run: the order ----------------------------------------------------------------------
plan=$(python3 "$script" run --dry-run --rounds 3 --gpuperf /bin/gp --out "$dir/o")
order=$(awk '{print $1 "." $2}' <<<"$plan" | tr '\n' ' ')
want="r1.gpuperf r1.torch r1.torch_stack r1.base r2.torch r2.torch_stack r2.base r2.gpuperf "
want+="r3.torch_stack r3.base r3.gpuperf r3.torch "
[[ $order == "$want" ]] || fail "dry-run order: $order"
[[ $(grep -c ' /bin/gp record -o .* -- .*decode_overhead.py worker --mode gpuperf ' <<<"$plan") -eq 3 ]] ||
  fail "gpuperf runs are not under gpuperf record: $(grep gpuperf <<<"$plan" | head -1)"
[[ $(grep -c 'record' <<<"$plan") -eq 3 ]] || fail "other modes run under gpuperf record"
[[ $(grep -c -- '--batch=4 ' <<<"$plan") -eq 12 ]] || fail "the default batch is not 4"
expect_exit 2 python3 "$script" run --dry-run --rounds 0

# --- aggregation on known rows ---------------------------------------------------------------
# Round 1: base 2.0, gpuperf 2.1, torch 2.6, torch_stack 4.0 -> gpuperf 1.05x, 5% of 2.0 ms.
# Round 2: base 2.2, gpuperf 2.42, torch_stack 3.3        -> gpuperf 1.10x, 20% of 1.1 ms.
# Round 3: torch_stack failed                              -> no share that round.
cat > "$dir/rows.jsonl" <<'EOF'
{"mode": "base", "round": 1, "status": "ok", "step_ms_median": 2.0, "device": "GPU-X", "torch": "2.11", "python": "3.12.3"}
{"mode": "gpuperf", "round": 1, "status": "ok", "step_ms_median": 2.1}
{"mode": "torch", "round": 1, "status": "ok", "step_ms_median": 2.6}
{"mode": "torch_stack", "round": 1, "status": "ok", "step_ms_median": 4.0}
{"mode": "base", "round": 2, "status": "ok", "step_ms_median": 2.2}
{"mode": "gpuperf", "round": 2, "status": "ok", "step_ms_median": 2.42}
{"mode": "torch_stack", "round": 2, "status": "ok", "step_ms_median": 3.3}
{"mode": "base", "round": 3, "status": "ok", "step_ms_median": 2.0}
{"mode": "gpuperf", "round": 3, "status": "ok", "step_ms_median": 2.3}
{"mode": "torch_stack", "round": 3, "status": "failed: 1"}
EOF
python3 "$script" aggregate --rows "$dir/rows.jsonl" --json "$dir/d.json" --table "$dir/d.txt" \
  > "$dir/stdout.txt"
rc=$?
[[ $rc -eq 1 ]] || fail "aggregate with a failed run exited $rc, want 1"
cmp -s "$dir/stdout.txt" "$dir/d.txt" || fail "the printed table differs from decode.txt"
get() { python3 -c "import json; r=json.load(open('$dir/d.json'))['result']; print($1)"; }
[[ $(get 'round(r["modes"]["gpuperf"]["ratio"]["median"], 4), round(r["modes"]["gpuperf"]["ratio"]["min"], 4), round(r["modes"]["gpuperf"]["ratio"]["max"], 4)') == "1.1 1.05 1.15" ]] ||
  fail "gpuperf ratios: $(get 'r["modes"]["gpuperf"]["ratio"]')"
[[ $(get 'round(r["gpuperf_pct_of_with_stack"]["median"], 4), r["gpuperf_pct_of_with_stack"]["n"]') == "12.5 2" ]] ||
  fail "share of with_stack: $(get 'r["gpuperf_pct_of_with_stack"]')"
[[ $(get 'r["modes"]["torch_stack"]["step_ms"]["n"], r["failed"]') == "2 ['torch_stack r3']" ]] ||
  fail "failed runs: $(get 'r["failed"]')"
[[ $(get 'r["budget"]["ratio_ok"], r["budget"]["pct_ok"]') == "True True" ]] ||
  fail "budget: $(get 'r["budget"]')"
grep -q '^  gpuperf (Python stacks) *2.300 \[2.100..2.420\] *1.10 \[1.05..1.15\]' "$dir/d.txt" ||
  fail "table row: $(grep gpuperf "$dir/d.txt" | head -1)"
grep -q "^gpuperf's added time as % of with_stack's: 12.5 \[5.0..20.0\]" "$dir/d.txt" ||
  fail "table share line: $(grep 'with_stack' "$dir/d.txt")"
grep -q '^failed runs: torch_stack r3' "$dir/d.txt" || fail "the table hides the failed run"

# The launching thread's CPU time, paired the same way: rounds of 1.2x and 1.4x (median 1.3);
# the extra modes (--modes) get their own rows and ratios.
cat > "$dir/cpu.jsonl" <<'EOF'
{"mode": "base", "round": 1, "status": "ok", "step_ms_median": 2.0, "step_cpu_ms_median": 1.0}
{"mode": "gpuperf", "round": 1, "status": "ok", "step_ms_median": 2.5, "step_cpu_ms_median": 1.2}
{"mode": "gpuperf_nostacks", "round": 1, "status": "ok", "step_ms_median": 2.2, "step_cpu_ms_median": 1.1}
{"mode": "base", "round": 2, "status": "ok", "step_ms_median": 2.0, "step_cpu_ms_median": 2.0}
{"mode": "gpuperf", "round": 2, "status": "ok", "step_ms_median": 2.5, "step_cpu_ms_median": 2.8}
EOF
python3 "$script" aggregate --rows "$dir/cpu.jsonl" --json "$dir/c.json" --table "$dir/c.txt" > /dev/null
[[ $(python3 -c "import json; r=json.load(open('$dir/c.json'))['result']['cpu_ratio']; print(round(r['gpuperf']['median'], 4), r['gpuperf']['n'], round(r['gpuperf_nostacks']['median'], 4))") == "1.3 2 1.1" ]] ||
  fail "CPU ratios: $(head -c 600 "$dir/c.json")"
grep -q '^  gpuperf --no-stacks  *2.200' "$dir/c.txt" || fail "extra mode row: $(cat "$dir/c.txt")"
grep -q "CPU time per step, x no profiler: gpuperf (Python stacks) 1.30 \[1.20..1.40\]" "$dir/c.txt" ||
  fail "CPU line: $(grep CPU "$dir/c.txt")"
plan=$(python3 "$script" run --dry-run --rounds 1 --modes gpuperf_nostacks --gpuperf /bin/gp --out "$dir/o")
grep -q ' /bin/gp record -o .* --no-stacks -- .*--mode gpuperf_nostacks ' <<<"$plan" ||
  fail "--modes gpuperf_nostacks: $plan"
[[ $(wc -l <<<"$plan") -eq 2 ]] || fail "--modes runs base and the named mode only: $plan"
expect_exit 2 python3 "$script" run --dry-run --modes nosuchmode
plan=$(python3 "$script" run --dry-run --rounds 1 --modes gpuperf --pin-cpu 4-7 --gpuperf /bin/gp --out "$dir/o")
[[ $(grep -c ' taskset -c 4-7 ' <<<"$plan") -eq 2 ]] || fail "--pin-cpu: $plan"
grep -q ' taskset -c 4-7 /bin/gp record ' <<<"$plan" || fail "--pin-cpu pins gpuperf's process too: $plan"

# The in-process A/B row: its levels against its own "none" steps, one line per process.
cat > "$dir/ab.jsonl" <<'EOF'
{"mode": "base", "round": 1, "status": "ok", "step_ms_median": 2.0}
{"mode": "gpuperf_ab", "round": 1, "status": "ok", "step_ms_median": 3.3, "ab": {"median_ms": {"full": 3.3, "none": 3.0, "floor": 3.15}, "full_over_none": 1.1, "floor_over_none": 1.05}}
EOF
python3 "$script" aggregate --rows "$dir/ab.jsonl" --table "$dir/ab.txt" > /dev/null
grep -q '^  in-process A/B, round 1: none 3.000 ms; full 3.300 ms (1.100x), floor 3.150 ms (1.050x)$' "$dir/ab.txt" ||
  fail "A/B line: $(grep 'A/B' "$dir/ab.txt")"

# The paired A/B estimate: the median over cycles of each level's block median over the
# same cycle's "none" block median. A slow spell (the third cycle, 3x slower) pulls the
# plain medians' ratio to 1.15, not the paired one (1.10); the first step after each switch
# is left out.
paired=$(cd "$(dirname "$script")" && GPUPERF_AB_LEVELS=full,none python3 - <<'EOF'
import decode_overhead as d
ab = d.ABSchedule()
steps = []
for full, none in [(1.1, 1.0), (1.2, 1.0), (3.3, 3.0), (1.1, 1.0)]:
    for name, ms in (("full", full), ("none", none)):
        for i in range(d.AB_BLOCK):
            ab.labels.append(None if i == 0 else (len(ab.labels) // d.AB_BLOCK, name))
            steps.append(ms if i else 99.0)
r = ab.summary(steps)
print(f"{r['full_paired']:.3f} {r['full_over_none']:.3f} {len(r['block_medians'])}")
EOF
)
[[ $paired == "1.100 1.150 8" ]] || fail "paired A/B: '$paired', want '1.100 1.150 8'"

# The optional levels: CUPTI detached and torch.profiler with stacks, in the same process.
# Ratios against the detached blocks get their own keys; gpuperf's added time over
# with_stack's is paired per cycle ((1.1-1)/(2-1) = 10% in each cycle, whatever the cycle's
# speed), and the table says both.
detached=$(cd "$(dirname "$script")" && GPUPERF_AB_LEVELS=full,none,detached,torch_stack,kind10 python3 - <<'EOF'
import decode_overhead as d
assert [name for name, _ in d.AB_LEVELS] == ["full", "none", "detached", "torch_stack", "kind10"], d.AB_LEVELS
assert dict(d.AB_LEVELS)["kind10"] == -110
ab = d.ABSchedule()
steps = []
for scale in (1.0, 1.0, 3.0):
    for name, ms in (("full", 1.1), ("none", 1.05), ("detached", 1.0), ("torch_stack", 2.0),
                     ("kind10", 1.0 + 0.1 / 1.1)):
        for i in range(d.AB_BLOCK):
            ab.labels.append(None if i == 0 else (len(ab.labels) // d.AB_BLOCK, name))
            steps.append(ms * scale if i else 99.0)
r = ab.summary(steps)
print(f"{r['full_paired_detached']:.3f} {r['none_paired_detached']:.3f} "
      f"{r['torch_stack_paired_detached']:.3f} {r['full_pct_of_torch_stack']:.1f} "
      f"{r['full_paired']:.3f} {r['full_over_kernel_records_paired']:.3f}")
EOF
)
[[ $detached == "1.100 1.050 2.000 10.0 1.048 1.008" ]] ||
  fail "A/B against detached: '$detached', want '1.100 1.050 2.000 10.0 1.048 1.008'"
cat > "$dir/detached.jsonl" <<'EOF'
{"mode": "base", "round": 1, "status": "ok", "step_ms_median": 2.0}
{"mode": "gpuperf_ab", "round": 1, "status": "ok", "step_ms_median": 2.2, "ab": {"median_ms": {"full": 2.2, "detached": 2.0, "torch_stack": 4.0}, "full_over_detached": 1.1, "torch_stack_over_detached": 2.0, "full_paired_detached": 1.09, "full_pct_of_torch_stack": 10.0}}
EOF
python3 "$script" aggregate --rows "$dir/detached.jsonl" --table "$dir/detached.txt" > /dev/null
grep -q '^  in-process A/B, round 1, x CUPTI detached (2.000 ms): full 1.100x (paired 1.090x), torch_stack 2.000x; gpuperf.s added time 10.0% of with_stack.s (paired)$' "$dir/detached.txt" ||
  fail "A/B line against detached: $(grep 'A/B' "$dir/detached.txt")"

# Over budget: gpuperf at 1.3x.
sed -i 's/"mode": "gpuperf", "round": 1, "status": "ok", "step_ms_median": 2.1/"mode": "gpuperf", "round": 1, "status": "ok", "step_ms_median": 2.6/; s/2.42/2.86/; s/"step_ms_median": 2.3}/"step_ms_median": 2.6}/' "$dir/rows.jsonl"
python3 "$script" aggregate --rows "$dir/rows.jsonl" --json "$dir/d.json" > /dev/null
[[ $(get 'r["budget"]["ratio_ok"], r["budget"]["pct_ok"]') == "False False" ]] ||
  fail "over budget: $(get 'r["budget"]')"

# train_overhead.py (the training A/B, run on the GPU machine) takes decode_overhead's level
# table: its default levels must all be names the hook knows, and it refuses to run outside
# gpuperf record.
python3 "$SRC/bench/python/train_overhead.py" --help > /dev/null || fail "train_overhead.py --help"
python3 -c "
import sys; sys.path.insert(0, '$SRC/bench/python')
import os; os.environ.pop('GPUPERF_AB_LEVELS', None)
import train_overhead, decode_overhead as h
names = os.environ['GPUPERF_AB_LEVELS'].split(',')
assert [n for n, _ in h.AB_LEVELS] == names, (h.AB_LEVELS, names)
assert h.level_value('noautograd') == 9 and h.level_value('idlecallbacks') == 7, 'levels'
" || fail "train_overhead.py's levels are not the hook's"
finish
