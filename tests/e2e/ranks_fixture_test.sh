#!/usr/bin/env bash
# A 2-rank DDP run recorded on two H200s in one command (tests/data/h200x2/ddp/, made by
# tests/gpu/checks/ranks.sh; see its PROVENANCE): rank 1 sleeps 50 ms before each step. Read
# back by every command that takes a directory: the ranks section names rank 1 the straggler
# with a median delay of 50 ms +-10%, rank 0's communication time is the waiting; the insights
# hold one straggler_rank finding, late because of its CPU, whose stack is the step's
# forward after the sleep (not DDP's start-up); --split-by rank gives each rank
# its part; the Perfetto export has a process track per rank. Skips (77) while the fixture
# is absent.
source "$(dirname "$0")/lib.sh"
fixture=$SRC/tests/data/h200x2/ddp
if ! compgen -G "$fixture/*.gpt" > /dev/null || [[ ! -f $fixture/PROVENANCE ]]; then
  echo "skip: no 2-rank fixture at $fixture (tests/gpu/checks/ranks.sh makes it)"
  exit 77
fi
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

"$GPUPERF" report "$fixture" --insights --json -o "$dir/report.json" 2> "$dir/report.err" ||
  fail "report: $(cat "$dir/report.err")"
python3 - "$dir/report.json" <<'PY' || fail "ranks or insights wrong"
import json, sys
doc = json.load(open(sys.argv[1]))
ranks = doc["ranks"]
rows = {r["rank"]: r for r in ranks["ranks"] if r["rank"] >= 0}
assert sorted(rows) == [0, 1], sorted(rows)
s = ranks["straggler"]
assert s["rank"] == 1, s
delay_ms = s["delay_median_ns"] / 1e6
assert abs(delay_ms - 50) <= 5, delay_ms
assert s["last_arrivals"] >= 0.75 * s["collectives"], s
# Rank 0 waits in its all-reduces for rank 1: most of its communication time is that wait.
assert rows[0]["comm_ns"] > 0.8 * s["delay_total_ns"], (rows[0]["comm_ns"], s["delay_total_ns"])
assert rows[1]["comm_ns"] < rows[0]["comm_ns"] / 10, (rows[0]["comm_ns"], rows[1]["comm_ns"])
found = [i for i in doc["insights"] if i["rule"] == "straggler_rank"]
assert len(found) == 1, [i["rule"] for i in doc["insights"]]
assert "Rank 1" in found[0]["finding"] and "CPU" in found[0]["finding"], found[0]["finding"]
assert not any(i["rule"] == "comm_not_overlapped" for i in doc["insights"]), "waiting taken for communication"
# Its idle time is counted between its collectives: the per-step sleep, not DDP's start-up
# (seconds of idle before the first collective). The launch that ended most of it is the
# step's forward (pytorch_ddp.py:48 runs ddp(x); the shown stack stops at its Linear layer).
ev = {e["name"]: e["value"] for e in found[0]["evidence"]}
assert ev["idle_before_launches"] < 1.5 * s["delay_total_ns"], ev
assert abs(ev["idle_excess"] - s["delay_total_ns"]) < 0.25 * s["delay_total_ns"], ev
stack = found[0]["stack"]
assert not any("_verify_param_shape_across_processes" in f or "DistributedDataParallel.__init__" in f
               for f in stack), stack
assert any(f.startswith("Linear.forward (linear.py:") for f in stack), stack
assert "between collectives from Linear.forward" in found[0]["finding"], found[0]["finding"]
print(f"straggler rank 1, median {delay_ms:.1f} ms over {s['last_arrivals']}/{s['collectives']}")
PY

"$GPUPERF" report "$fixture" --split-by rank > "$dir/by_rank.txt" 2>&1 || fail "report --split-by rank"
grep -q "rank 0" "$dir/by_rank.txt" && grep -q "rank 1" "$dir/by_rank.txt" ||
  fail "--split-by rank does not show both ranks: $(head -5 "$dir/by_rank.txt")"
# Each rank's own report names the GPUs of its energy table by rank, as the whole run does.
per_rank=$(sed '/^==== the whole run ====/q' "$dir/by_rank.txt")
grep -q "rank 0 GPU 0" <<<"$per_rank" && ! grep -Eq "pid [0-9]+ GPU" <<<"$per_rank" ||
  fail "a rank's energy table names its GPUs by pid: $(grep -E 'GPU [0-9] ' <<<"$per_rank" | head -3)"
"$GPUPERF" export "$fixture" -o "$dir/ddp.json" 2>/dev/null || fail "export"
for r in 0 1; do
  grep -q "\"rank $r (vm, GPU $r)\"" "$dir/ddp.json" || fail "no process track for rank $r in the timeline"
done
finish
