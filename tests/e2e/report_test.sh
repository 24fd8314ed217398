#!/usr/bin/env bash
# gpuperf report and gpuperf diff end to end: formats, sections, filters, exit codes,
# bad input, and diff as a CI gate (pass and fail).
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$SYNTH" -o "$dir/base.gpt" --kernels 3000 >/dev/null || fail "synth failed"
"$SYNTH" -o "$dir/bigger.gpt" --kernels 4500 >/dev/null || fail "synth failed"

expect_exit 0 "$GPUPERF" report --help
expect_output_contains "--gap-threshold" "$GPUPERF" report --help
expect_output_contains "--fail-if" "$GPUPERF" diff --help

# Text: every section heading, aligned tables.
expect_exit 0 "$GPUPERF" report "$dir/base.gpt"
for heading in "Kernels" "CUDA runtime API" "CUDA driver API" "Memory copies by kind" \
               "Memsets by memory kind" "Synchronization" "Device memory" "GPU utilization" \
               "NVTX ranges" "Profiler overhead"; do
  expect_output_contains "$heading" "$GPUPERF" report "$dir/base.gpt"
done
expect_output_contains "3,000" "$GPUPERF" report "$dir/base.gpt" --sections summary

# JSON parses and holds the totals; sections can be chosen alone.
"$GPUPERF" report "$dir/base.gpt" --json -o "$dir/base.json" || fail "report --json failed"
python3 - "$dir/base.json" <<'PY' || fail "report JSON is wrong"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema_version"] == 1
assert doc["summary"]["kernels"] == 3000, doc["summary"]["kernels"]
assert sum(k["count"] for k in doc["kernels"]) == 3000
assert doc["data_loss"] == []
PY
only=$("$GPUPERF" report "$dir/base.gpt" --format json --sections kernels)
[[ $only == *'"kernels"'* && $only != *'"runtime_api"'* ]] || fail "--sections kernels shows other sections"

# CSV: one section alone is plain CSV with a header row.
first=$("$GPUPERF" report "$dir/base.gpt" --format csv --sections memcpy | head -1)
[[ $first == kind,count,bytes,* ]] || fail "memcpy CSV header: $first"

# Top and filters.
rows=$("$GPUPERF" report "$dir/base.gpt" --format csv --sections kernels --top 3 | wc -l)
[[ $rows -eq 4 ]] || fail "--top 3 gave $((rows - 1)) rows"
expect_output_contains '"kernels": 3000' "$GPUPERF" report "$dir/base.gpt" --json --pid 4242
expect_exit 2 "$GPUPERF" report "$dir/base.gpt" --json --pid 1  # not in the trace: an error
expect_stderr_contains "holds no process 1 (its process: 4242)" "$GPUPERF" report "$dir/base.gpt" --pid 1
expect_output_contains '"kernels": []' "$GPUPERF" report "$dir/base.gpt" --json --kernel '^no_such_kernel$'

# Bad arguments and bad input.
expect_exit 2 "$GPUPERF" report "$dir/base.gpt" --format yaml
expect_exit 2 "$GPUPERF" report "$dir/base.gpt" --sections bogus
expect_stderr_contains "unknown report section" "$GPUPERF" report "$dir/base.gpt" --sections bogus
expect_exit 2 "$GPUPERF" report "$dir/base.gpt" --kernel '(['
expect_exit 2 "$GPUPERF" report "$dir/base.gpt" --from 5
expect_exit 2 "$GPUPERF" report "$dir/base.gpt" --sort fastest
expect_exit 3 "$GPUPERF" report "$dir/missing.gpt"
echo "not a trace" > "$dir/text.gpt"
expect_exit 3 "$GPUPERF" report "$dir/text.gpt"
expect_stderr_contains "is not a gpuperf trace" "$GPUPERF" report "$dir/text.gpt"

# A truncated trace: still a report, and the loss is shown.
size=$(stat -c %s "$dir/base.gpt")
head -c $((size - 10)) "$dir/base.gpt" > "$dir/cut.gpt"
expect_exit 0 "$GPUPERF" report "$dir/cut.gpt"
expect_output_contains "DATA LOSS" "$GPUPERF" report "$dir/cut.gpt"

# diff: same run passes every gate; a run with 50% more work fails with one line each.
expect_exit 0 "$GPUPERF" diff "$dir/base.json" "$dir/base.gpt" --fail-if 'total_gpu_time>+10%' \
  --fail-if 'api_failures>0'
expect_exit 1 "$GPUPERF" diff "$dir/base.json" "$dir/bigger.gpt" --fail-if 'total_gpu_time>+10%'
err=$("$GPUPERF" diff "$dir/base.json" "$dir/bigger.gpt" --fail-if 'total_gpu_time>+10%' \
      --fail-if 'kernel_launches>+40%' 2>&1 >/dev/null)
[[ $(grep -c '^gpuperf: regression: ' <<<"$err") -eq 2 ]] || fail "expected 2 regression lines: $err"
[[ $err == *"total GPU time"*"exceeds +10%"* ]] || fail "regression line: $err"
"$GPUPERF" report "$dir/bigger.gpt" --json -o "$dir/bigger.json" || fail "report failed"
expect_exit 0 "$GPUPERF" diff "$dir/base.json" "$dir/bigger.json" --fail-if 'total_gpu_time>+60%'
expect_output_contains "Kernels" "$GPUPERF" diff "$dir/base.json" "$dir/bigger.json"
expect_exit 2 "$GPUPERF" diff "$dir/base.json" "$dir/bigger.json" --fail-if 'nonsense>1'
expect_exit 3 "$GPUPERF" diff "$dir/text.gpt" "$dir/bigger.json"
echo '{"broken": ' > "$dir/broken.json"
expect_exit 3 "$GPUPERF" diff "$dir/broken.json" "$dir/bigger.json"
echo '{"schema_version": 99, "summary": {}, "kernels": []}' > "$dir/future.json"
expect_exit 3 "$GPUPERF" diff "$dir/future.json" "$dir/bigger.json"
expect_stderr_contains "schema version 99" "$GPUPERF" diff "$dir/future.json" "$dir/bigger.json"

finish
