#!/usr/bin/env bash
# Two ranks recorded in one command, as `gpuperf record -- torchrun ...` would: two fake CUDA
# processes (tests/fakes, "ranks" scenario) with torchrun's environment, an all-reduce
# barrier between them and rank 1 arriving last at each, 50 ms or more after rank 0. Each trace
# knows its rank; the report names rank 1 the straggler with the delays rank 1 measured. GPU power comes from the fake
# libnvidia-ml.so.1 (tests/live/fake_nvml.cc: 100 W on GPU 0, 110 W on GPU 1); without NVML
# there are no readings and one info counter.
source "$(dirname "$0")/lib.sh"
bin=$GPUPERF_BINARY_DIR
lib=$bin/src/inject/libgpuperf_inject.so
app=$bin/tests/fakes/fake_cuda_app
nvml=$bin/tests/fake_nvml
[[ -x $app && -f $lib && -f $nvml/libnvidia-ml.so.1 ]] || {
  echo "skip: no injection library, fake app or fake NVML in this build"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

mkdir "$dir/barrier"
launcher="export FAKE_BARRIER_DIR=$dir/barrier FAKE_SLOW_RANK=1 FAKE_SLOW_MS=50 WORLD_SIZE=2 \
LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 TORCHELASTIC_RUN_ID=ci-job; \
RANK=0 LOCAL_RANK=0 $app ranks 12 & RANK=1 LOCAL_RANK=1 $app ranks 12; wait"
LD_LIBRARY_PATH=$nvml GPUPERF_POWER_HZ=100 FAKE_APP_NO_STATS=1 \
  "$GPUPERF" record -o "$dir/job" --inject-lib "$lib" -- bash -c "$launcher" > "$dir/rec.out" 2> "$dir/rec.err" \
  || fail "record failed: $(tail -3 "$dir/rec.err")"
[[ $(ls "$dir/job"/*.gpt | wc -l) -eq 2 ]] || fail "want one trace per rank: $(ls "$dir/job")"
grep -q '^  ranks     0, 1 of 2$' "$dir/rec.err" || fail "record's summary lacks the ranks: $(cat "$dir/rec.err")"
grep -Eq '^  power     [0-9,]+ GPU power readings \(NVML\)$' "$dir/rec.err" || fail "no power line in the summary"
"$GPUPERF" dump "$dir/job" > "$dir/dump.txt" 2>/dev/null
for r in 0 1; do
  grep -Eq "^rank pid=[0-9]+ rank=$r local_rank=$r world_size=2 local_world_size=2 node_rank=-1 launcher=\"torchrun\" job_id=\"ci-job\" master=\"127.0.0.1:29500\" boot_id=\"[0-9a-f-]{36}\"" \
    "$dir/dump.txt" || fail "no rank record for rank $r: $(grep '^rank ' "$dir/dump.txt")"
done
samples=$(grep -c '^power_sample .* source=instant' "$dir/dump.txt")
[[ $samples -ge 20 ]] || fail "only $samples instant power readings"
grep -q '^power_sample pid=[0-9]* device_id=1 ' "$dir/dump.txt" || fail "rank 1's GPU 1 was not sampled"
grep '^power_sample ' "$dir/dump.txt" | grep -q 'device_id=0 .*power_mw=100000 ' || fail "GPU 0 power"

"$GPUPERF" report "$dir/job" --json -o "$dir/report.json" 2>/dev/null || fail "report failed"
# Rank 1's lateness at each all-reduce, as it measured it (tests/fakes/README.md, ranks).
late=$(sed -n 's/^fake-app: rank 1 late_ns=//p' "$dir/rec.out")
[[ -n $late ]] || fail "rank 1 did not say how late it was: $(cat "$dir/rec.out")"
python3 - "$dir/report.json" "$late" <<'PY' || fail "ranks and energy figures"
import json, sys
r = json.load(open(sys.argv[1]))
late = sorted(int(x) for x in sys.argv[2].split(","))
assert len(late) == 12 and late[0] >= 50e6, late  # it slept 50 ms after rank 0 arrived
ranks = r["ranks"]["ranks"]
assert [x["rank"] for x in ranks] == [0, 1], ranks
for x in ranks:
    assert x["kernels"] == 36 and x["comm_kernels"] == 12, x
    assert x["compute_ns"] == 12 * 2 * 3000000, x  # two 3 ms kernels a step
s = r["ranks"]["straggler"]
assert s["rank"] == 1 and s["last_arrivals"] == 12, s
assert s["delay_median_ns"] == late[len(late) // 2] and s["delay_total_ns"] == sum(late), (s, late)
devices = r["energy"]["devices"]
assert len(devices) == 2, devices
for d in devices:
    assert d["source"] == "instant", d
    assert d["counter_j"] is not None and d["counter_j"] > 0, d
    # Constant power: the readings' integral and NVML's counter agree.
    assert abs(d["sampled_over_counter_j"] / d["counter_j"] - 1) < 0.05, d
    assert abs(d["attributed_j"] + d["idle_j"] - d["sampled_j"]) < 1e-5, d
PY
"$GPUPERF" report "$dir/job" > "$dir/report.txt" 2>/dev/null
grep -q 'straggler: rank 1 (.*, GPU 1) arrived last' "$dir/report.txt" || fail "no straggler line"

# The insight rules across ranks: rank 1 is the straggler and its CPU made it late (it
# slept before each step; its kernels took as long as rank 0's). Rank 0's all-reduces
# last ~50 ms each, but that is waiting for rank 1, not communication to overlap.
"$GPUPERF" report "$dir/job" --insights --json -o "$dir/insights.json" 2>/dev/null || fail "report --insights failed"
python3 - "$dir/insights.json" "$late" <<'PY' || fail "rank insights"
import json, sys
found = json.load(open(sys.argv[1]))["insights"]
late = sorted(int(x) for x in sys.argv[2].split(","))
rules = [f["rule"] for f in found]
assert rules.count("straggler_rank") == 1, rules
assert "comm_not_overlapped" not in rules and "rank_power" not in rules, rules
s = next(f for f in found if f["rule"] == "straggler_rank")
ev = {e["name"]: e["value"] for e in s["evidence"]}
assert ev["median_delay"] == late[len(late) // 2], (ev, late)
assert ev["last_arrivals"] == 12, ev
assert "Rank 1 (" in s["finding"] and "its CPU launched late" in s["finding"], s["finding"]
assert ev["idle_excess"] >= 10 * 40e6, ev  # rank 1's GPU waited for each late step
PY
"$GPUPERF" report "$dir/job" --insights --sections insights 2>/dev/null | grep -q '\[straggler_rank\] pid' \
  || fail "no straggler_rank finding in the text report"

# NVML refused by the driver, missing entirely, or switched off.
run_basic() {  # NAME ENV...: the basic scenario recorded with extra environment
  local name=$1; shift
  env "$@" FAKE_APP_NO_STATS=1 "$GPUPERF" record -o "$dir/$name" --inject-lib "$lib" -- "$app" basic \
    > /dev/null 2>&1 || fail "$name: record failed"
}
run_basic no_nvml LD_LIBRARY_PATH=/nonexistent
[[ $(stat_value "$dir/no_nvml" power_unavailable) == 1 ]] || fail "no NVML: power_unavailable not 1"
[[ $("$GPUPERF" dump "$dir/no_nvml" | grep -c '^power_sample ') -eq 0 ]] || fail "no NVML, yet readings"
run_basic broken LD_LIBRARY_PATH=$nvml FAKE_NVML_INIT_ERROR=9
[[ $(stat_value "$dir/broken" power_unavailable) == 1 ]] || fail "failing nvmlInit: not counted"
run_basic off LD_LIBRARY_PATH=$nvml GPUPERF_POWER_HZ=0
[[ -z $(stat_value "$dir/off" power_unavailable) ]] || fail "power off still looked for NVML"
[[ $("$GPUPERF" dump "$dir/off" | grep -c '^power_sample ') -eq 0 ]] || fail "power off, yet readings"
run_basic averaged LD_LIBRARY_PATH=$nvml FAKE_NVML_NO_INSTANT=1 GPUPERF_POWER_HZ=200
"$GPUPERF" dump "$dir/averaged" | grep -q '^power_sample .* source=averaged' \
  || fail "no averaged readings when the instant field is refused"
"$GPUPERF" dump "$dir/averaged" | grep '^power_sample ' | grep -q 'source=instant' \
  && fail "instant readings from a driver that refuses them"
[[ $(stat_value "$dir/averaged" power_matched_by_index) == 1 ]] || fail "index match not counted"

finish
