#!/usr/bin/env bash
# bench/overhead/overhead.py aggregate on fabricated runs: medians, spreads, ratios to the
# no-profiler mode, added microseconds per launch, lost kernels, drops, bytes per kernel,
# added RSS, failed runs left out, and the soak verdict.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
cat >"$dir/runs.jsonl" <<'EOF'
{"workload": "launch_bound", "mode": "base", "round": 1, "status": "ok", "rc": 0, "wall_s": 1.0, "app_rss_kb": 100000, "summary": {"kernels": 200001, "wall_ms": 900.0, "us_per_launch": 3.5}}
{"workload": "launch_bound", "mode": "gp_all", "round": 1, "status": "ok", "rc": 0, "wall_s": 1.5, "app_rss_kb": 140000, "summary": {"kernels": 200001, "wall_ms": 1300.0, "us_per_launch": 4.5}, "kernel_records": 200001, "records": 400010, "bytes": 3200016, "drops": 0}
{"workload": "launch_bound", "mode": "base", "round": 2, "status": "ok", "rc": 0, "wall_s": 1.2, "app_rss_kb": 100000, "summary": {"kernels": 200001, "wall_ms": 1000.0, "us_per_launch": 3.7}}
{"workload": "launch_bound", "mode": "gp_all", "round": 2, "status": "ok", "rc": 0, "wall_s": 1.4, "app_rss_kb": 150000, "summary": {"kernels": 200001, "wall_ms": 1250.0, "us_per_launch": 4.4}, "kernel_records": 200001, "records": 400010, "bytes": 3200016, "drops": 0}
{"workload": "launch_bound", "mode": "base", "round": 3, "status": "ok", "rc": 0, "wall_s": 1.1, "app_rss_kb": 100000, "summary": {"kernels": 200001, "wall_ms": 950.0, "us_per_launch": 3.6}}
{"workload": "launch_bound", "mode": "gp_all", "round": 3, "status": "ok", "rc": 0, "wall_s": 1.6, "app_rss_kb": 160000, "summary": {"kernels": 200001, "wall_ms": 1350.0, "us_per_launch": 4.6}, "kernel_records": 199990, "records": 399990, "bytes": 3200016, "drops": 11}
{"workload": "launch_bound", "mode": "gp_all", "round": 4, "status": "failed", "rc": 1, "wall_s": 99.0, "app_rss_kb": 999999, "summary": {}}
{"workload": "pytorch_infer", "mode": "base", "round": 1, "status": "ok", "rc": 0, "wall_s": 10.0, "app_rss_kb": null, "summary": {"kernels": -1, "wall_ms": 2000.0}}
{"workload": "pytorch_infer", "mode": "torch", "round": 1, "status": "ok", "rc": 0, "wall_s": 12.5, "app_rss_kb": null, "summary": {"kernels": -1, "wall_ms": 2500.0}, "kernel_records": 5000, "records": 90000, "bytes": 20000000}
{"workload": "soak", "mode": "gp_all", "round": 1, "status": "ok", "rc": 0, "wall_s": 70.0, "app_rss_kb": 200000, "summary": {"kernels": 21000004, "launches_per_s": 350000, "wall_ms": 60000.0}, "kernel_records": 21000004, "drops": 0, "bytes": 336000064}
EOF

python3 "$SRC/bench/overhead/overhead.py" aggregate --runs "$dir/runs.jsonl" \
  --json "$dir/out.json" --table "$dir/out.txt" >"$dir/stdout.txt" 2>"$dir/stderr.txt" ||
  fail "aggregate failed: $(cat "$dir/stderr.txt")"

python3 - "$dir/out.json" <<'EOF' || fail "aggregate JSON has wrong numbers (see above)"
import json, sys
data = json.load(open(sys.argv[1]))
by = {(e["workload"], e["mode"]): e for e in data["results"]}
errors = []
def near(what, got, want, tol=1e-9):
    if got is None or abs(got - want) > tol:
        errors.append(f"{what}: got {got}, want {want}")

base, full = by[("launch_bound", "base")], by[("launch_bound", "gp_all")]
near("base wall median", base["wall_s"]["median"], 1.1)
near("base wall spread", base["wall_s"]["spread"], (1.2 - 1.0) / 1.1)
near("base ratio to itself", base["wall_ratio"], 1.0)
near("gp_all wall median (failed run left out)", full["wall_s"]["median"], 1.5)
near("gp_all wall ratio", full["wall_ratio"], 1.5 / 1.1)
near("gp_all app ratio", full["app_ratio"], 1300.0 / 950.0)
near("gp_all added us/launch", full["us_per_launch_added"], 4.5 - 3.6)
near("gp_all kernel records median", full["kernel_records"], 200001)
near("gp_all kernels lost", full["kernels_lost"], 0)
near("gp_all drops (worst run)", full["drops"], 11)
near("gp_all bytes per kernel", full["bytes_per_kernel"], 3200016 / 200001)
near("gp_all added RSS", full["rss_added_kb"], 150000 - 100000)
if full["runs"] != 4 or full["failed"] != 1:
    errors.append(f"gp_all runs/failed: {full['runs']}/{full['failed']}, want 4/1")
torch = by[("pytorch_infer", "torch")]
near("torch wall ratio", torch["wall_ratio"], 1.25)
if torch["kernels_expected"] is not None or torch["kernels_lost"] is not None:
    errors.append("kernels=-1 (unknown) must not yield expected or lost kernels")
if torch["wall_s"]["spread"] is not None:
    errors.append("one run has no spread")
soak = data["soak"]
if len(soak) != 1 or not soak[0]["rate_met"] or not soak[0]["zero_loss"]:
    errors.append(f"soak verdict: {soak}")
print("\n".join(errors), file=sys.stderr)
sys.exit(1 if errors else 0)
EOF

table=$(cat "$dir/out.txt")
for needle in "gpuperf all+stacks" "200001/200001" "1.364" "+0.900" "16.0" "+48.8" "4 (1 failed)" "18.2%" \
    "zero loss" "350.00k launches/s (meets 300k/s)"; do
  [[ $table == *"$needle"* ]] || fail "table lacks '$needle'"
done
[[ $(cat "$dir/stdout.txt") == "$table" ]] || fail "printed table differs from the table file"

# A lossy soak below the rate is called out.
sed -e 's/"kernel_records": 21000004, "drops": 0/"kernel_records": 20999000, "drops": 1000/' \
    -e 's/"launches_per_s": 350000/"launches_per_s": 250000/' "$dir/runs.jsonl" >"$dir/lossy.jsonl"
lossy=$(python3 "$SRC/bench/overhead/overhead.py" aggregate --runs "$dir/lossy.jsonl")
[[ $lossy == *"BELOW 300k/s"* && $lossy == *"kernels lost 1.00k"* && $lossy == *"LOSS"* ]] ||
  fail "lossy soak not reported: $(tail -n 1 <<<"$lossy")"

finish
