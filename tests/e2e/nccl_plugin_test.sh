#!/usr/bin/env bash
# gpuperf as NCCL's profiler plugin (docs/multi-rank.md): `gpuperf record` points
# NCCL_PROFILER_PLUGIN at the injection library; two fake ranks (tests/fakes, "ranks" scenario
# with FAKE_NCCL=1) load it the way NCCL 2.28 does and report each collective through it: a
# broadcast, six all-reduces of 1 or 2 MiB and a group of two bf16 all-reduces run by one
# kernel, rank 1 arriving last at each (30 ms or more late at each step). The traces hold
# each collective's communicator, sequence number and size; the report joins them to their
# kernels, matches them across ranks by sequence number and computes nccl-tests' bandwidths.
source "$(dirname "$0")/lib.sh"
use_fake_app
stat_value() { "$GPUPERF" dump "$1" 2>/dev/null | grep "# $2\$" | sed 's/.*value=\([0-9]*\).*/\1/' | sort -n | tail -1; }

job() {  # NAME EXTRA-ENV...: two ranks under `gpuperf record` (extra: record options first)
  local name=$1; shift
  mkdir -p "$dir/$name.barrier"
  local launcher="export FAKE_BARRIER_DIR=$dir/$name.barrier FAKE_SLOW_RANK=1 FAKE_SLOW_MS=30 \
WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 FAKE_NCCL=1; RANK=0 LOCAL_RANK=0 $app ranks 6 & \
RANK=1 LOCAL_RANK=1 $app ranks 6; wait"
  env FAKE_APP_NO_STATS=1 GPUPERF_POWER_HZ=0 "$@" bash -c "$launcher" > "$dir/$name.out" 2> "$dir/$name.err" \
    || fail "$name: record failed: $(tail -3 "$dir/$name.err")"
}

job v5 "$GPUPERF" record -o "$dir/v5" --inject-lib "$lib" --
"$GPUPERF" dump "$dir/v5" > "$dir/v5.dump" 2>/dev/null || fail "dump failed"
[[ $(grep -c "^  nccl      18 collectives on 1 communicator " "$dir/v5.err") -eq 1 ]] || fail "no nccl line in the summary: $(cat "$dir/v5.err")"
[[ $(grep -c '^nccl_comm ' "$dir/v5.dump") -eq 2 ]] || fail "want one communicator per rank: $(grep '^nccl_comm ' "$dir/v5.dump")"
for r in 0 1; do
  grep -Eq "^nccl_comm pid=[0-9]+ comm_hash=26719232079233006 name=\"fake_dp\" rank=$r nranks=2 nnodes=1 plugin_version=5 " \
    "$dir/v5.dump" || fail "no communicator record for rank $r"
done
[[ $(stat_value "$dir/v5" nccl_collectives) == 9 ]] || fail "nccl_collectives: $(stat_value "$dir/v5" nccl_collectives)"
# Per rank: 3 ignored events a collective call (group API, collective API, group; the
# grouped call: 4) and 3 oddities (an event type not asked for, a foreign handle, a null
# descriptor): 3 + 6*3 + 4 + 3.
[[ $(stat_value "$dir/v5" nccl_events_ignored) == 28 ]] || fail "nccl_events_ignored: $(stat_value "$dir/v5" nccl_events_ignored)"
[[ -z $(stat_value "$dir/v5" nccl_collectives_dropped) ]] || fail "collectives dropped"

python3 - "$dir/v5.dump" <<'PY' || fail "collective records"
import re, sys, collections
recs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    kind, _, rest = line.rstrip("\n").partition(" ")
    if kind in ("nccl_collective", "kernel", "api", "launch_link"):
        recs[kind].append(dict(re.findall(r'(\w+)=("[^"]*"|\S+)', rest)))
colls = recs["nccl_collective"]
assert len(colls) == 18, len(colls)
by_pid = collections.defaultdict(list)
for c in colls:
    by_pid[c["pid"]].append(c)
want = [("Broadcast", 0, 4096, "ncclInt8", 1, 0)] + \
       [("AllReduce", s, 262144 * (1 + s % 2), "ncclFloat32", 4, -1) for s in range(6)] + \
       [("AllReduce", 6, 1000, "ncclBfloat16", 2, -1), ("AllReduce", 7, 3000, "ncclBfloat16", 2, -1)]
ranks = set()
for pid, cs in by_pid.items():
    cs.sort(key=lambda c: int(c["start_ns"]))
    got = [(c["func"].strip('"'), int(c["seq"]), int(c["count"]), c["datatype"].strip('"'),
            int(c["type_size"]), int(c["root"])) for c in cs]
    assert got == want, got
    for c in cs:
        assert c["comm_hash"] == "26719232079233006" and c["nranks"] == "2", c
        assert c["algorithm"] == '"RING"' and c["protocol"] == '"LL"' and c["channels"] == "2", c
        assert 0 < int(c["start_ns"]) <= int(c["end_ns"]), c
    ranks.add(cs[0]["rank"])
assert ranks == {"0", "1"}, ranks
PY

"$GPUPERF" report "$dir/v5" --json -o "$dir/v5.json" 2>/dev/null || fail "report failed"
late=$(sed -n 's/^fake-app: rank 1 late_ns=//p' "$dir/v5.out")
python3 - "$dir/v5.json" "$dir/v5.dump" "$late" <<'PY' || fail "report's NCCL figures"
import json, re, sys, collections
late = sorted(int(x) for x in sys.argv[3].split(","))
r = json.load(open(sys.argv[1]))["ranks"]
n = r["nccl"]
assert n["matched_by_sequence"] is True, n
assert n["unjoined"] == 0 and n["kernels_unjoined"] == 0, n
rows = {x["func"]: x for x in n["collectives"]}
assert set(rows) == {"AllReduce", "Broadcast"}, rows
b, a = rows["Broadcast"], rows["AllReduce"]
for row in (a, b):
    assert row["comm_hash"] == "005eed0000c0ffee" and row["comm_name"] == "fake_dp", row
    assert row["nranks"] == 2 and row["ranks"] == 2 and row["unjoined"] == 0, row
    assert row["algorithms"] == "RING/LL x%d" % row["calls"], row
# The broadcast: 4096 bytes in each rank's 50 us kernel.
assert (b["calls"], b["instances"], b["complete_instances"], b["bytes"]) == (2, 1, 1, 4096), b
assert b["time_ns"] == 50000 and b["algbw_gbps"] == 0.08192 and b["busbw_gbps"] == 0.08192, b
# All-reduces: 3 x 1 MiB, 3 x 2 MiB, then 2000 and 6000 bytes of bf16 in one 40 us kernel
# (which they share 1:3).
assert (a["calls"], a["instances"], a["complete_instances"]) == (16, 8, 8), a
assert a["bytes"] == 3 * 2**20 + 3 * 2**21 + 8000 and a["min_bytes"] == 2000 and a["max_bytes"] == 2**21, a
# Transfer time of each f32 all-reduce from the kernels themselves: from the later start to
# the later end of the two ranks' kernels.
kernels = collections.defaultdict(list)
for line in open(sys.argv[2]):
    if line.startswith("kernel ") and "AllReduce_Sum_f32" in line:
        f = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))
        kernels[f["pid"]].append((int(f["start_ns"]), int(f["end_ns"])))
assert len(kernels) == 2 and all(len(k) == 6 for k in kernels.values()), kernels
per_rank = [sorted(k) for k in kernels.values()]
transfer = sum(max(e for _, e in pair) - max(s for s, _ in pair) for pair in zip(*per_rank))
assert a["time_ns"] == transfer + 40000, (a["time_ns"], transfer)
assert a["timed_instances"] == 8 and a["timed_bytes"] == a["bytes"], a
algbw = a["bytes"] / a["time_ns"]
assert abs(a["algbw_gbps"] - algbw) < 1e-6 and a["busbw_gbps"] == a["algbw_gbps"], a  # 2 ranks: factor 1
# Instances matched by sequence number: the grouped kernel once, rank 1 last each time, by
# what it measured (30 ms or more after rank 0 at each step).
kinds = {c["name"]: c["instances"] for c in r["collectives"]}
assert kinds == {"ncclDevKernel_AllReduce_Sum_f32_RING_LL": 6, "ncclDevKernel_Broadcast_RING_LL": 1,
                 "ncclDevKernel_AllReduce_Sum_bf16_RING_LL": 1}, kinds
s = r["straggler"]
assert len(late) == 8 and late[len(late) // 2] >= 30e6, late
assert s["rank"] == 1 and s["last_arrivals"] == 8, s
assert s["delay_median_ns"] == late[len(late) // 2] and s["delay_total_ns"] == sum(late), (s, late)
PY
"$GPUPERF" report "$dir/v5" > "$dir/v5.txt" 2>/dev/null || fail "text report failed"
grep -Eq '^  +AllReduce +fake_dp +2/2 +16 +8 ' "$dir/v5.txt" || fail "no NCCL table: $(cat "$dir/v5.txt")"
grep -q 'matched across ranks by communicator and NCCL sequence number' "$dir/v5.txt" || fail "no sequence note"

# NCCL 2.26/2.27 find only the v4 table.
job v4 env FAKE_NCCL_VERSION=4 "$GPUPERF" record -o "$dir/v4" --inject-lib "$lib" --
"$GPUPERF" dump "$dir/v4" > "$dir/v4.dump" 2>/dev/null
[[ $(grep -c '^nccl_comm .* plugin_version=4 ' "$dir/v4.dump") -eq 2 ]] || fail "v4: no communicators"
[[ $(grep -c '^nccl_collective .*func="AllReduce"' "$dir/v4.dump") -eq 16 ]] || fail "v4: all-reduces"
# v4 has no API events: only the group event of each call, and the oddities but the null one.
[[ $(stat_value "$dir/v4" nccl_events_ignored) == 10 ]] || fail "v4 ignored: $(stat_value "$dir/v4" nccl_events_ignored)"

# Switched off three ways; without plugin records the report is as before (kernel order).
job off_env env GPUPERF_NCCL_PLUGIN=0 "$GPUPERF" record -o "$dir/off_env" --inject-lib "$lib" --
job off_flag "$GPUPERF" record -o "$dir/off_flag" --no-nccl-plugin --inject-lib "$lib" --
job user_none env NCCL_PROFILER_PLUGIN=none "$GPUPERF" record -o "$dir/user_none" --inject-lib "$lib" --
for name in off_env off_flag user_none; do
  "$GPUPERF" dump "$dir/$name" 2>/dev/null | grep -q '^nccl_' && fail "$name: plugin records"
  "$GPUPERF" report "$dir/$name" --json -o "$dir/$name.json" 2>/dev/null || fail "$name: report"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['ranks']; assert 'nccl' not in r, r; \
assert r['straggler']['rank'] == 1, r" "$dir/$name.json" || fail "$name: report"
done

# A trace recorded before the plugin existed (the two-H200 DDP fixture, NCCL kernels only)
# reports exactly as it did: the goldens were written by the gpuperf before this change.
fixture=$SRC/tests/data/h200x2/ddp
"$GPUPERF" report "$fixture" --sections ranks --json -o "$dir/ddp.json" 2>/dev/null || fail "fixture report"
"$GPUPERF" report "$fixture" --sections ranks > "$dir/ddp.txt" 2>/dev/null
for f in ddp.json ddp.txt; do
  golden=$SRC/tests/golden/ranks/h200x2_ddp_ranks.${f#ddp.}
  if [[ ${GPUPERF_BLESS:-0} == 1 ]]; then cp "$dir/$f" "$golden"; fi
  cmp -s "$dir/$f" "$golden" || fail "the fixture's ranks section changed: $(diff "$golden" "$dir/$f" | head -5)"
done
finish
