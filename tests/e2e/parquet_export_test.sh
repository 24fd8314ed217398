#!/usr/bin/env bash
# gpuperf export --format parquet, read by two real, independent readers from the npm registry
# (scripts/install-sql-engines.sh): on every trace under tests/data and on synthetic multi-rank
# jobs (one host; four hosts whose clocks are seconds apart), DuckDB runs docs/parquet.md's
# queries as written and their answers must equal gpuperf's own to the nanosecond (report's
# kernel table, the folded flame graph per process, report --split-by rank's ranks), and
# hyparquet opens every file of every table with the row counts DuckDB and _gpuperf.json give
# and reads the values DuckDB reads; a job large enough for several pages and row groups too.
source "$(dirname "$0")/lib.sh"
# Its first line says whether it ran or why not (scripts/test.sh shows it in the CI log).
command -v node >/dev/null && command -v npm >/dev/null || { echo "parquet check: skipped: no node/npm"; exit 77; }
engines=$GPUPERF_BINARY_DIR/sql-engines
"$SRC/scripts/install-sql-engines.sh" "$GPUPERF_BINARY_DIR" >/dev/null || { fail "npm could not install the readers"; finish; }
if [[ -f $engines/unreachable ]]; then echo "parquet check: skipped: $(cat "$engines/unreachable")"; exit 77; fi
[[ -d $engines/node_modules/@duckdb/node-api ]] || { fail "no DuckDB in $engines"; finish; }
cp "$SRC/tests/e2e/parquet_check.mjs" "$engines/" || fail "cannot copy the check"
RANK_SYNTH=$GPUPERF_BINARY_DIR/tests/gpuperf_rank_synth
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

# check NAME TRACE: exports TRACE, reads it back and compares the queries' answers.
check() {
  local name=$1 trace=$2 out=$dir/$1
  mkdir -p "$out"
  "$GPUPERF" export "$trace" --format parquet -o "$out/ds" > "$out/export.txt" 2> "$out/export.err" ||
    { fail "$name: export failed: $(cat "$out/export.err")"; return; }
  node "$engines/parquet_check.mjs" "$out/ds" "$SRC/docs/parquet.md" > "$out/answers.json" \
    2> "$out/check.err" || { fail "$name: $(cat "$out/check.err")"; return; }
  "$GPUPERF" report "$trace" --json -o "$out/report.json" 2>/dev/null || { fail "$name: report"; return; }
  for pid in $(python3 -c 'import json,sys; print(*[p["pid"] for p in json.load(open(sys.argv[1]))["summary"]["processes"]])' "$out/report.json"); do
    "$GPUPERF" flamegraph "$trace" --folded --pid "$pid" -o "$out/folded.$pid" 2>/dev/null ||
      fail "$name: flamegraph --pid $pid"
  done
  local split=""
  if "$GPUPERF" report "$trace" --split-by rank --json -o "$out/split.json" 2>/dev/null; then split=$out/split.json; fi
  python3 - "$name" "$out" "$split" <<'PY' || fail "$name: answers differ"
import glob, json, os, sys
name, out, split = sys.argv[1:4]
answers = json.load(open(f"{out}/answers.json"))["answers"]
report = json.load(open(f"{out}/report.json"))
problems = []
# The kernel table: calls, total, min, max per name, in the report's order of total time.
want = {k["name"]: (k["count"], k["total_ns"], k["min_ns"], k["max_ns"]) for k in report["kernels"]}
got = {r["name"]: tuple(int(r[c]) for c in ("calls", "total_ns", "min_ns", "max_ns"))
       for r in answers["top_kernels"]}
if got != want:
    problems.append(f"top_kernels: {sorted(set(got.items()) ^ set(want.items()))[:4]}")
if [int(r["total_ns"]) for r in answers["top_kernels"]] != [k["total_ns"] for k in report["kernels"]]:
    problems.append("top_kernels: not in the report's order")
# The folded flame graph of each process.
for path in glob.glob(f"{out}/folded.*"):
    pid = path.rsplit(".", 1)[1]
    want = {}
    for line in open(path, encoding="utf-8"):
        stack, _, ns = line.rstrip("\n").rpartition(" ")
        want[stack] = int(ns)
    got = {r["stack"]: int(r["gpu_ns"]) for r in answers["gpu_time_per_stack"] if r["pid"] == pid}
    if got != want:
        diff = sorted(set(got.items()) ^ set(want.items()))
        problems.append(f"gpu_time_per_stack pid {pid}: {len(diff)} lines differ, e.g. {diff[:2]}")
# The ranks: collectives taken part in, last arrivals and delays; the straggler.
if split:
    ranks = json.load(open(split))["ranks"]
    fields = ("collectives", "last_arrivals", "delay_total_ns", "delay_median_ns", "delay_max_ns")
    want = {r["pid"]: tuple(r[f] for f in fields) for r in ranks["ranks"] if r["collectives"]}
    got = {int(r["pid"]): tuple(int(r[f]) for f in fields) for r in answers["collective_delays"]}
    if got != want:
        problems.append(f"collective_delays: got {got} want {want}")
    straggler = ranks["straggler"]
    first = answers["collective_delays"][0] if answers["collective_delays"] else None
    got_straggler = int(first["pid"]) if first and int(first["delay_total_ns"]) > 0 else None
    if got_straggler != (straggler["pid"] if straggler else None):
        problems.append(f"straggler: got pid {got_straggler}, report says {straggler}")
for p in problems:
    print(f"{name}: {p}", file=sys.stderr)
sys.exit(1 if problems else 0)
PY
}

n=0
for trace in $(find "$SRC/tests/data" -name '*.gpt' -printf '%h\n' | sort -u); do
  check "$(basename "$trace")-$((n++))" "$trace"
done
[[ $n -ge 20 ]] || fail "only $n traces found under tests/data"

if [[ -x $RANK_SYNTH ]]; then
  # Four ranks, rank 2 reaching every all-reduce 300 us late.
  "$RANK_SYNTH" -o "$dir/job" --ranks 4 --steps 12 --slow-rank 2 --delay-us 300 --agent >/dev/null ||
    fail "rank synth failed"
  check one-host "$dir/job"
  # Eight ranks on four hosts whose clocks are 7 s apart, wall clocks off by 2.5 ms.
  "$RANK_SYNTH" -o "$dir/hosts" --ranks 8 --steps 12 --slow-rank 5 --delay-us 150 \
    --hosts a,a,b,b,c,c,d,d --host-clock-step-ns 7000000000 --wall-error-ns 2500000 >/dev/null ||
    fail "rank synth (hosts) failed"
  check four-hosts "$dir/hosts"
  grep -q '"method": "collectives"' "$dir/four-hosts/ds/_gpuperf.json" || fail "no clock alignment in _gpuperf.json"
fi
# Two ranks of 130,000 kernels each: a file's kernels fill a row group (fifteen data pages of
# 8,192 rows per column chunk) and begin a second one, whose last page is shorter.
"$SYNTH" --job "$dir/pages" --ranks 2 --hosts 2 --kernels-per-rank 130000 \
  --collectives-per-rank 300 >/dev/null || fail "synth (pages) failed"
check pages "$dir/pages"

versions=$(cd "$engines" && node -e 'for (const p of ["@duckdb/node-api", "hyparquet"])
  process.stdout.write(p + " " + JSON.parse(require("fs").readFileSync(`node_modules/${p}/package.json`)).version + " ")')
echo "parquet check: ran $versions(node $(node --version)) on $n traces and the synthetic jobs: $failures failed"

# An output directory that holds something else is refused, not mixed with.
mkdir -p "$dir/busy" && touch "$dir/busy/notes.txt"
expect_stderr_contains "is not empty and holds no gpuperf dataset" \
  "$GPUPERF" export "$SRC/tests/data/h100/vector_add" --format parquet -o "$dir/busy"
# A dataset written before is replaced.
expect_exit 0 "$GPUPERF" export "$SRC/tests/data/h100/vector_add" --format parquet -o "$dir/one-host/ds"
finish
