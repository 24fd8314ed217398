#!/usr/bin/env bash
# The rank_power insight end to end: two balanced fake ranks (no sleeping rank, so no
# straggler) recorded in one command with GPU power from the fake libnvidia-ml.so.1. With the
# fake's own powers (100 W and 110 W, 10% apart) the rule stays quiet; with rank 1's GPU at
# 130 W (FAKE_NVML_POWER_MW) it names rank 1, 30% over the other rank, with an energy stake.
source "$(dirname "$0")/lib.sh"
bin=$GPUPERF_BINARY_DIR
lib=$bin/src/inject/libgpuperf_inject.so
app=$bin/tests/fakes/fake_cuda_app
nvml=$bin/tests/fake_nvml
[[ -x $app && -f $lib && -f $nvml/libnvidia-ml.so.1 ]] || {
  echo "skip: no injection library, fake app or fake NVML in this build"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

record_job() {  # NAME [ENV...]: two balanced ranks of 30 steps
  local name=$1; shift
  mkdir -p "$dir/$name.barrier"
  local launcher="export FAKE_BARRIER_DIR=$dir/$name.barrier WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 \
MASTER_ADDR=127.0.0.1 MASTER_PORT=29500; \
RANK=0 LOCAL_RANK=0 $app ranks 30 & RANK=1 LOCAL_RANK=1 $app ranks 30; wait"
  env "$@" LD_LIBRARY_PATH=$nvml GPUPERF_POWER_HZ=200 FAKE_APP_NO_STATS=1 \
    "$GPUPERF" record -o "$dir/$name" --inject-lib "$lib" -- bash -c "$launcher" \
    > "$dir/$name.out" 2> "$dir/$name.err" || fail "$name: record failed: $(tail -3 "$dir/$name.err")"
  "$GPUPERF" report "$dir/$name" --insights --json -o "$dir/$name.json" 2>/dev/null ||
    fail "$name: report --insights failed"
}

record_job same_power
python3 - "$dir/same_power.json" <<'PY' || fail "10% apart: rank_power fired or the job was not balanced"
import json, sys
r = json.load(open(sys.argv[1]))
rules = [f["rule"] for f in r["insights"]]
assert "rank_power" not in rules, rules
assert "straggler_rank" not in rules and "rank_load_imbalance" not in rules, rules
PY

record_job hot_rank FAKE_NVML_POWER_MW=100000,130000
python3 - "$dir/hot_rank.json" <<'PY' || fail "30% apart: no rank_power finding for rank 1"
import json, sys
r = json.load(open(sys.argv[1]))
found = [f for f in r["insights"] if f["rule"] == "rank_power"]
assert len(found) == 1, [f["rule"] for f in r["insights"]]
f = found[0]
ev = {e["name"]: e["value"] for e in f["evidence"]}
assert abs(ev["mean_power"] - 130) < 3, ev
assert abs(ev["others_median_power"] - 100) < 3, ev
assert abs(ev["difference"] - 0.30) < 0.03, ev
assert ev["readings"] >= 10, ev
# The stake is the 30 W difference over the rank's sampled time.
assert abs(ev["energy_difference"] - 30 * ev["sampled"] / 1e9) < 0.05 * ev["energy_difference"], ev
assert "The GPU of rank 1 (" in f["finding"] and "more than the median" in f["finding"], f["finding"]
PY
"$GPUPERF" report "$dir/hot_rank" --insights --sections insights 2>/dev/null | grep -q '\[rank_power\]' ||
  fail "no rank_power finding in the text report"
finish
