#!/usr/bin/env bash
# Per-host summaries (`report DIR --summary`) merged by `report A.json B.json ...` give the job's
# tables as the raw traces do: on the 2-rank DDP fixture split over two "hosts", and on a
# synthetic 16-rank job over 4 hosts whose clocks are seconds apart, the merged report's
# totals, processes, kernel table (all but the median, which it says it cannot give), API,
# copy and set tables and the whole ranks section (clocks, delays, straggler) equal `report
# --json` of all the traces, and its launch stacks equal `flamegraph --folded`. A summary
# given twice is left out with a warning; a missing host is one line naming its ranks; a
# plain report is no summary.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

# compare NAME RAWDIR HOSTDIR...: summarizes each host, merges them, compares with the raw.
compare() {
  local name=$1 raw=$2; shift 2
  local out=$dir/$name summaries=()
  mkdir -p "$out"
  for host in "$@"; do
    "$GPUPERF" report "$host" --summary -o "$out/$(basename "$host").json" 2> "$out/summary.err" ||
      { fail "$name: --summary of $host: $(cat "$out/summary.err")"; return; }
    summaries+=("$out/$(basename "$host").json")
  done
  "$GPUPERF" report "${summaries[@]}" --json -o "$out/merged.json" 2> "$out/merge.err" ||
    { fail "$name: merge: $(cat "$out/merge.err")"; return; }
  "$GPUPERF" report "$raw" --json -o "$out/raw.json" 2>/dev/null || { fail "$name: report"; return; }
  "$GPUPERF" flamegraph "$raw" --folded -o "$out/raw.folded" 2>/dev/null ||
    { fail "$name: flamegraph"; return; }
  python3 - "$name" "$out" <<'PY' || fail "$name: the merged summaries differ from the traces"
import json, sys
name, out = sys.argv[1:3]
merged = json.load(open(f"{out}/merged.json"))
raw = json.load(open(f"{out}/raw.json"))
problems = []
def same(what, got, want):
    if got != want:
        problems.append(f"{what}: merged {json.dumps(got)[:300]} raw {json.dumps(want)[:300]}")
summary = {k: v for k, v in raw["summary"].items()}
same("summary", merged["summary"], summary)
kernels = []
for k in raw["kernels"]:
    k = dict(k)
    k["median_ns"] = None  # not from summaries, and said so
    kernels.append(k)
same("kernels", merged["kernels"], kernels)
assert "kernel medians" in merged["merged"]["not_merged"], merged["merged"]
for table in ("runtime_api", "driver_api", "memcpy", "memset", "ranks"):
    same(table, merged.get(table), raw.get(table))
folded = {}
for line in open(f"{out}/raw.folded", encoding="utf-8"):
    stack, _, ns = line.rstrip("\n").rpartition(" ")
    folded[stack] = int(ns)
stacks = {";".join(s["frames"]): s["gpu_ns"] for s in merged["stacks"] if s["gpu_ns"]}
same("stacks", stacks, folded)
if not merged["kernels"] or not merged.get("ranks"):
    problems.append("nothing merged")
for p in problems:
    print(f"{name}: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY
}

# The 2-rank fixture: torchrun's agent and rank 0 on one "host", rank 1 on the other.
fixture=$SRC/tests/data/h200x2/ddp
if compgen -G "$fixture/*.gpt" > /dev/null; then
  mkdir -p "$dir/ddp/a" "$dir/ddp/b"
  cp "$fixture"/python3.12.653.gpt "$fixture"/python3.12.700.gpt "$dir/ddp/a/"
  cp "$fixture"/python3.12.701.gpt "$dir/ddp/b/"
  compare ddp "$fixture" "$dir/ddp/a" "$dir/ddp/b"
else
  echo "no 2-rank fixture: its part skipped"
fi

# 16 ranks on 4 hosts, each host's clock 1.37 s from the next and its wall clock off.
"$SYNTH" --job "$dir/job" --ranks 16 --hosts 4 --kernels-per-rank 3000 --collectives-per-rank 60 \
  --slow-rank 6 || fail "synth --job failed"
for h in 0 1 2 3; do
  mkdir -p "$dir/hosts/node$h"
  for r in 0 1 2 3; do cp "$dir/job/rank$(printf %04d $((h * 4 + r))).gpt" "$dir/hosts/node$h/"; done
done
compare job16 "$dir/job" "$dir/hosts/node0" "$dir/hosts/node1" "$dir/hosts/node2" "$dir/hosts/node3"
grep -q '"method": "collectives"' "$dir/job16/merged.json" || fail "job16: no clock alignment across hosts"
python3 - "$dir/job16/merged.json" <<'PY' || fail "job16: straggler not rank 6"
import json, sys
assert json.load(open(sys.argv[1]))["ranks"]["straggler"]["rank"] == 6
PY

# A summary given twice counts once, and says so.
s=$dir/job16
"$GPUPERF" report "$s/node0.json" "$s/node1.json" "$s/node1.json" "$s/node2.json" "$s/node3.json" \
  --json -o "$dir/twice.json" 2> "$dir/twice.err" || fail "a summary given twice: $(cat "$dir/twice.err")"
grep -q "node1.json holds the same processes as .*node1.json: left out" "$dir/twice.err" ||
  fail "a summary given twice is not said: $(cat "$dir/twice.err")"
python3 - "$dir/twice.json" "$s/merged.json" <<'PY' || fail "a summary given twice changed the tables"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["kernels"] == b["kernels"] and a["ranks"] == b["ranks"]
PY
# A host missing: its ranks named in one line, the rest merged.
"$GPUPERF" report "$s/node0.json" "$s/node1.json" "$s/node3.json" -o "$dir/missing.txt" 2>&1 ||
  fail "a missing host failed the merge"
[[ $(grep -c "have no trace here" "$dir/missing.txt") -eq 1 ]] &&
  grep -q "ranks 8, 9, 10, 11 of the job's 16 have no trace here" "$dir/missing.txt" ||
  fail "a missing host is not one line naming its ranks: $(grep -n '!' "$dir/missing.txt")"
grep -Eq '^  1[0-1] ' "$dir/missing.txt" && fail "ranks of the missing host in the table"
grep -Eq '^  15 ' "$dir/missing.txt" || fail "the other hosts' ranks are not reported"
# A plain report (no job part) is refused in one line.
"$GPUPERF" report "$dir/job" --json -o "$dir/plain.json" 2>/dev/null
expect_stderr_contains "is a report without a job part" "$GPUPERF" report "$dir/plain.json" "$s/node0.json"
finish
