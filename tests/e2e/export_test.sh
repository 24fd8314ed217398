#!/usr/bin/env bash
# gpuperf export end to end: both formats, format from the output name, default names,
# gzip, and bad input.
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$SYNTH" -o "$dir/run.gpt" --kernels 500 >/dev/null || fail "synth failed"

# Perfetto by default, next to the trace.
expect_exit 0 "$GPUPERF" export "$dir/run.gpt"
[[ -s $dir/run.perfetto-trace ]] || fail "no run.perfetto-trace next to the trace"
if command -v protoc >/dev/null; then
  protoc --decode=perfetto.protos.Trace -I "$SRC/tests/proto" "$SRC/tests/proto/perfetto_min.proto" \
    < "$dir/run.perfetto-trace" > "$dir/decoded.txt" || fail "protoc cannot decode our trace"
  begins=$(grep -c 'type: TYPE_SLICE_BEGIN' "$dir/decoded.txt")
  ends=$(grep -c 'type: TYPE_SLICE_END' "$dir/decoded.txt")
  [[ $begins -eq $ends && $begins -gt 1000 ]] || fail "slice begins $begins, ends $ends"
fi

# Chrome JSON: from the extension, plain and gzipped; valid JSON either way.
expect_exit 0 "$GPUPERF" export "$dir/run.gpt" -o "$dir/t.json"
python3 -m json.tool "$dir/t.json" >/dev/null || fail "t.json is not valid JSON"
expect_exit 0 "$GPUPERF" export "$dir/run.gpt" -o "$dir/t.json.gz"
zcat "$dir/t.json.gz" | python3 -m json.tool >/dev/null || fail "t.json.gz is not gzipped JSON"
cmp -s "$dir/t.json" <(zcat "$dir/t.json.gz") || fail ".json.gz holds other content than .json"
expect_exit 0 "$GPUPERF" export "$dir/run.gpt" --format chrome
[[ -s $dir/run.json.gz ]] || fail "--format chrome did not default to run.json.gz"
expect_output_contains "flow arrows" "$GPUPERF" export "$dir/run.gpt" -o "$dir/x.pftrace"

# Every kernel shows up once, with its arrow.
python3 - "$dir/t.json" <<'PY' || fail "JSON content check failed"
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
kernels = [e for e in events if e["ph"] == "X" and e.get("cat") == "kernel"]
starts = {e["id"] for e in events if e["ph"] == "s"}
ends = {e["id"] for e in events if e["ph"] == "f"}
assert len(kernels) == 500, len(kernels)
assert starts == ends and len(starts) >= 500, (len(starts), len(ends))
PY

# The same trace exported twice gives the same bytes (no wall-clock time, no randomness).
expect_exit 0 "$GPUPERF" export "$dir/run.gpt" -o "$dir/again.perfetto-trace"
cmp -s "$dir/run.perfetto-trace" "$dir/again.perfetto-trace" || fail "export is not deterministic"

# Bad input: one message, a non-zero exit, and no half-written output left behind.
echo "hello" > "$dir/text.gpt"
expect_exit 3 "$GPUPERF" export "$dir/text.gpt" -o "$dir/bad.json"
expect_stderr_contains "is not a gpuperf trace" "$GPUPERF" export "$dir/text.gpt" -o "$dir/bad.json"
[[ ! -e $dir/bad.json ]] || fail "a failed export left bad.json behind"
expect_exit 3 "$GPUPERF" export "$dir/missing.gpt"
expect_exit 2 "$GPUPERF" export "$dir/run.gpt" --format svg
expect_stderr_contains "unknown format" "$GPUPERF" export "$dir/run.gpt" --format svg
expect_exit 1 "$GPUPERF" export "$dir/run.gpt" -o "$dir/no/such/dir/t.json"

# A truncated trace still exports what it holds, with a warning.
size=$(stat -c %s "$dir/run.gpt")
head -c $((size - 10)) "$dir/run.gpt" > "$dir/cut.gpt"
expect_exit 0 "$GPUPERF" export "$dir/cut.gpt" -o "$dir/cut.json"
expect_stderr_contains "ends inside a chunk" "$GPUPERF" export "$dir/cut.gpt" -o "$dir/cut.json"

finish
