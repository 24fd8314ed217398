#!/usr/bin/env bash
# gpuperf report --insights on the real H100 fixtures: the findings a reader should get
# (start-up gaps, pageable copies, synchronization stalls in the PyTorch run; the CPU-side
# check between two steps of the mock transformer), ranked, complete, in text, JSON and
# CSV; and nothing on runs without a problem.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
pytorch=$(ls "$SRC"/tests/data/h100/pytorch_transformer/*.gpt)
mock=$(ls "$SRC"/tests/data/h100/mock_transformer/*.gpt)

expect_exit 0 "$GPUPERF" report "$pytorch" --insights --format json -o "$dir/pytorch.json"
python3 - "$dir/pytorch.json" <<'PY' || fail "PyTorch insights are not what the run shows"
import json, sys
doc = json.load(open(sys.argv[1]))
findings = doc["insights"]
rules = [f["rule"] for f in findings]
assert {"gpu_idle_gaps", "pageable_copies", "sync_stalls", "tiny_copies"} <= set(rules), rules
assert [f["rank"] for f in findings] == list(range(1, len(findings) + 1))
timed = [f["at_stake"]["ns"] for f in findings if f["at_stake"]["kind"] != "memory"]
assert timed == sorted(timed, reverse=True), timed
for f in findings:
    assert f["finding"] and f["suggestion"] and f["evidence"] and f["pid"] == 789, f
    assert all(e["unit"] in ("count", "ns", "bytes", "fraction", "bytes_per_second")
               for e in f["evidence"]), f
# The largest idle time is start-up: loading cuBLAS's and PyTorch's GPU code.
assert "start-up" in findings[0]["finding"] and "cuLibraryLoadData" in findings[0]["finding"]
# The model copied back to the host for the CPU check: every device-to-host copy of the
# run went to pageable memory, from one place.
dtoh = [f for f in findings if f["rule"] == "pageable_copies" and "device-to-host" in f["finding"]]
assert len(dtoh) == 1, dtoh
evidence = {e["name"]: e["value"] for e in dtoh[0]["evidence"]}
table = [m for m in doc["memcpy"] if m["kind"] == "DtoH"][0]
assert (evidence["copies"], evidence["bytes"]) == (table["count"], table["bytes"]), (evidence, table)
# Innermost first, as the PyTorch view names it (the op, not its native implementation).
assert dtoh[0]["stack"][0] == "aten::copy_", dtoh[0]["stack"]
PY

# Text, the findings alone: the mock transformer's reference check on the CPU between
# steps 1 and 2 (generate, line 458 calls it; 456 is the next step's first copy).
expect_exit 0 "$GPUPERF" report "$mock" --sections insights -o "$dir/mock.txt"
grep -q '^Insights  (1 finding' "$dir/mock.txt" || fail "mock: not one finding: $(head -3 "$dir/mock.txt")"
grep -q 'outside CUDA before launching more work from generate (mock_transformer.cu:456)' \
  "$dir/mock.txt" || fail "mock: the finding does not name generate:456"
grep -q '^ *try: ' "$dir/mock.txt" || fail "mock: no suggestion"
grep -q '^Kernels' "$dir/mock.txt" && fail "--sections insights printed other sections"

# Without --insights nothing changes: no section, no key.
"$GPUPERF" report "$mock" --format json | python3 -c '
import json, sys
assert "insights" not in json.load(sys.stdin)' || fail "a plain report has insights"
"$GPUPERF" report "$mock" | grep -q '^Insights' && fail "a plain text report has insights"
# CSV: one table.
[[ $("$GPUPERF" report "$mock" --sections insights --format csv | head -1) == rank,rule,* ]] \
  || fail "CSV insights table has no header"

# Runs without a problem say so.
for clean in vector_add cuda_graph; do
  out=$("$GPUPERF" report "$SRC/tests/data/h100/$clean" --sections insights)
  [[ $out == *"none found by gpu_idle_gaps"* ]] || fail "$clean: findings on a clean run: $out"
done

finish
