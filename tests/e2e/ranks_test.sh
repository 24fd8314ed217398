#!/usr/bin/env bash
# Several ranks in one run, end to end on synthetic jobs whose figures are known
# (tests/support/rank_trace.h): the report's ranks and energy sections, --split-by rank in
# report and flamegraph, one Perfetto process track per rank, --weight energy, and the
# clocks of two hosts aligned on their collectives.
source "$(dirname "$0")/lib.sh"
RANK_SYNTH=$GPUPERF_BINARY_DIR/tests/gpuperf_rank_synth
[[ -x $RANK_SYNTH ]] || { echo "skip: no gpuperf_rank_synth in this build"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

# Two ranks on one host (and torchrun's agent, which is no rank); rank 1 reaches every
# all-reduce 200 us late; power read every 250 us.
job=$dir/job
"$RANK_SYNTH" -o "$job" --ranks 2 --steps 10 --slow-rank 1 --delay-us 200 --agent \
  --power-interval-us 250 || fail "rank synth failed"
"$GPUPERF" report "$job" > "$dir/report.txt" 2> "$dir/report.err" || fail "report failed"
grep -q '^Ranks  (2 ranks on 1 host' "$dir/report.txt" || fail "no ranks section: $(head -c 400 "$dir/report.txt")"
grep -q 'straggler: rank 1 (node0, GPU 1) arrived last at 10 of 10 collectives, a median 200 µs after the next rank; 2.00 ms of waiting in all (100% of all ranks' "$dir/report.txt" \
  || fail "straggler line: $(grep straggler "$dir/report.txt")"
grep -q 'clocks: one host, one CLOCK_MONOTONIC' "$dir/report.txt" || fail "clock line missing"
grep -q '^Energy  (an estimate: NVML board power read 4000 times a second (instant readings)' \
  "$dir/report.txt" || fail "energy heading: $(grep -A1 '^Energy' "$dir/report.txt")"
grep -q 'AllReduce' "$dir/report.txt" || fail "no collective row"
"$GPUPERF" report "$job" --json -o "$dir/report.json" || fail "report --json failed"
python3 - "$dir/report.json" <<'PY' || fail "report JSON figures"
import json, sys
r = json.load(open(sys.argv[1]))
ranks = r["ranks"]["ranks"]
assert [x["rank"] for x in ranks] == [0, 1], ranks  # the agent is not a rank
fast, slow = ranks
assert (fast["compute_ns"], fast["comm_ns"], fast["overlap_ns"]) == (6000000, 5000000, 2000000), fast
assert (slow["comm_ns"], slow["overlap_ns"], slow["exposed_comm_ns"]) == (3000000, 2000000, 1000000), slow
s = r["ranks"]["straggler"]
assert s["rank"] == 1 and s["delay_median_ns"] == 200000 and s["last_arrivals"] == 10, s
e = r["energy"]
assert e["estimate"] is True
for d in e["devices"]:
    assert abs(d["attributed_j"] + d["idle_j"] - d["sampled_j"]) < 1e-5, d
    assert abs(d["sampled_over_counter_j"] - d["counter_j"]) < 0.01 * d["counter_j"], d
names = [k["display_name"] for k in e["kernels"]]
assert set(names) >= {"forward", "backward"}, names
PY

# --split-by rank: each rank's own report, then the whole run's ranks section.
"$GPUPERF" report "$job" --split-by rank > "$dir/split.txt" || fail "report --split-by rank failed"
for header in '==== rank 0 (node0, GPU 0), pid 1000 ====' '==== rank 1 (node0, GPU 1), pid 1001 ====' \
              '==== the whole run ===='; do
  grep -qF "$header" "$dir/split.txt" || fail "split report lacks '$header'"
done
[[ $(grep -c '^gpuperf report: 1 process' "$dir/split.txt") -eq 2 ]] || fail "split: want 2 one-process reports"
"$GPUPERF" report "$job" --split-by rank --json > "$dir/split.json" || fail "split json failed"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [p["rank"] for p in d["per_rank"]] == [0, 1]
assert all(p["report"]["summary"]["kernels"] == 30 for p in d["per_rank"])
assert d["ranks"]["straggler"]["rank"] == 1' "$dir/split.json" || fail "split JSON"
expect_exit 2 "$GPUPERF" report "$job" --split-by rank --format csv
"$SYNTH" -o "$dir/plain.gpt" --kernels 100 >/dev/null
expect_stderr_contains "holds no ranks" "$GPUPERF" report "$dir/plain.gpt" --split-by rank
# A trace of one process without NCCL keeps its report as it was: no ranks or energy section.
"$GPUPERF" report "$dir/plain.gpt" --json | python3 -c '
import json, sys; d = json.load(sys.stdin); assert "ranks" not in d and "energy" not in d' \
  || fail "a plain trace grew ranks/energy sections"

# Flame graph: a root per rank; energy as the weight.
"$GPUPERF" flamegraph "$job" --split-by rank --folded -o "$dir/ranks.folded" 2>/dev/null || fail "flamegraph --split-by rank"
cut -d';' -f1 "$dir/ranks.folded" | sort -u > "$dir/roots"
printf '[rank 0 (node0, GPU 0)]\n[rank 1 (node0, GPU 1)]\n' | cmp -s - "$dir/roots" || fail "roots: $(cat "$dir/roots")"
"$GPUPERF" flamegraph "$job" --weight energy --folded -o "$dir/energy.folded" 2> "$dir/energy.err" \
  || fail "flamegraph --weight energy: $(cat "$dir/energy.err")"
grep -q 'kernel energy (estimate, power read 4000/s)' "$dir/energy.err" || fail "energy summary: $(cat "$dir/energy.err")"
python3 - "$dir/energy.folded" "$dir/report.json" <<'PY' || fail "energy folded total"
import json, sys
total_uj = sum(int(line.rsplit(" ", 1)[1]) for line in open(sys.argv[1]))
attributed = json.load(open(sys.argv[2]))["energy"]["attributed_j"]
assert abs(total_uj / 1e6 - attributed) < 1e-4, (total_uj, attributed)
PY
"$GPUPERF" flamegraph "$job" --weight energy -o "$dir/energy.svg" 2>/dev/null || fail "energy SVG"
grep -q 'GPU energy (estimate)' "$dir/energy.svg" || fail "energy SVG title"
expect_exit 2 "$GPUPERF" flamegraph "$dir/plain.gpt" --weight energy --folded
expect_stderr_contains "no GPU power readings" "$GPUPERF" flamegraph "$dir/plain.gpt" --weight energy --folded

# Perfetto: one process track per rank, named after it (decoded with protoc).
"$GPUPERF" export "$job" -o "$dir/job.perfetto-trace" >/dev/null || fail "export failed"
if command -v protoc >/dev/null; then
  decode_perfetto "$dir/job.perfetto-trace" "$dir/decoded.txt" || fail "protoc cannot decode the export"
  for name in 'rank 0 (node0, GPU 0)' 'rank 1 (node0, GPU 1)'; do
    grep -A2 'process {' "$dir/decoded.txt" | grep -qF "process_name: \"$name\"" \
      || fail "no process track named '$name'"
  done
fi
"$GPUPERF" export "$job" -o "$dir/job.json" >/dev/null || fail "chrome export failed"
python3 - "$dir/job.json" <<'PY' || fail "chrome JSON process names"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
assert {"rank 0 (node0, GPU 0)", "rank 1 (node0, GPU 1)"} <= names, names
PY

# Two hosts: B's clock runs 7 s ahead and its wall clock is 2.5 ms off. The collectives
# put B back on A's clock to the nanosecond; the straggler (rank 3, on B) comes out right.
hosts=$dir/hosts
"$RANK_SYNTH" -o "$hosts" --ranks 4 --steps 12 --hosts nodeA,nodeB --host-clock-step-ns 7000000123 \
  --wall-error-ns 2500000 --slow-rank 3 --delay-us 150 || fail "two-host synth failed"
"$GPUPERF" report "$hosts" > "$dir/hosts.txt" 2>&1 || fail "two-host report failed"
grep -q 'clocks: 2 hosts, aligned on nodeA' "$dir/hosts.txt" || fail "no clock table"
grep -Eq '^ +nodeB +2 +collectives +-7.00 s +-2.50 ms +±0 ns +12 +0 ns$' "$dir/hosts.txt" \
  || fail "nodeB's clock row: $(grep -E '^ +node' "$dir/hosts.txt")"
grep -q '! the wall clocks of nodeB and nodeA disagreed by 2.50 ms; corrected on 12 collectives' \
  "$dir/hosts.txt" || fail "no wall-clock warning"
grep -q 'straggler: rank 3 (nodeB, GPU 3) arrived last at 12 of 12 collectives, a median 150 µs' \
  "$dir/hosts.txt" || fail "two-host straggler: $(grep straggler "$dir/hosts.txt")"
"$GPUPERF" report "$hosts" --json | python3 -c '
import json, sys
c = json.load(sys.stdin)["ranks"]["clocks"]
assert c[1]["offset_ns"] == -7000000123 and c[1]["wall_clock_offset_ns"] == -7000000123 + 2500000, c
assert c[1]["method"] == "collectives" and c[1]["uncertainty_ns"] == 0, c' || fail "clock JSON"
# The merged timeline puts every rank's all-reduce end at the same moment.
"$GPUPERF" export "$hosts" -o "$dir/hosts.json" > /dev/null 2> "$dir/hosts.export.err" || fail "two-host export"
grep -q 'clock alignment: the wall clocks of nodeB' "$dir/hosts.export.err" || fail "export did not warn"
python3 - "$dir/hosts.json" <<'PY' || fail "aligned all-reduce ends"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
ends = {}
for e in events:
    if e.get("ph") == "X" and "AllReduce" in e.get("name", ""):
        ends.setdefault(e["pid"], []).append(round(e["ts"] + e["dur"], 3))
assert len(ends) == 4, ends.keys()
firsts = {min(v) for v in ends.values()}
assert len(firsts) == 1, ends  # the first all-reduce ends together on all four ranks
PY

finish
