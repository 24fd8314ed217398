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
  decode_perfetto "$dir/run.perfetto-trace" "$dir/decoded.txt" || fail "protoc cannot decode our trace"
  # 500 launch calls and 13 copy calls (one per 40 kernels); their 513 kernels and copies
  # as GPU work, each on its own.
  begins=$(grep -c 'type: TYPE_SLICE_BEGIN' "$dir/decoded.txt")
  ends=$(grep -c 'type: TYPE_SLICE_END' "$dir/decoded.txt")
  gpu=$(grep -c '^  gpu_render_stage_event {' "$dir/decoded.txt")
  [[ $begins -eq 513 && $ends -eq 513 && $gpu -eq 513 ]] ||
    fail "slice begins $begins, ends $ends, GPU work $gpu (want 513 each)"
fi

# Perfetto's compact form: a fixed synthetic trace (its seed is fixed) of 20,000 kernels,
# each with its launch call, arrow and stack, takes at most 40 bytes per kernel.
"$SYNTH" -o "$dir/big.gpt" --kernels 20000 >/dev/null || fail "synth failed"
expect_exit 0 "$GPUPERF" export "$dir/big.gpt" -o "$dir/big.perfetto-trace"
size=$(stat -c %s "$dir/big.perfetto-trace")
(( size <= 40 * 20000 )) || fail "Perfetto takes $((size / 20000)) bytes per kernel (at most 40)"

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

# Windows. --max-kernels: exactly the first N kernels, and the line that says what was left.
expect_exit 0 "$GPUPERF" export "$dir/run.gpt" -o "$dir/cap.json" --max-kernels 123
err=$("$GPUPERF" export "$dir/run.gpt" -o "$dir/cap.perfetto-trace" --max-kernels 123 2>&1 >/dev/null)
[[ $err == *"gpuperf: window the first 123 kernels ("*"left out 377 kernels, "* ]] ||
  fail "no window line for --max-kernels: $err"
# --from/--to: what starts in the window, counted from the trace's first timestamp (the
# process start, 1 s, in the synthetic trace); the same events in JSON and Perfetto.
expect_exit 0 "$GPUPERF" export "$dir/run.gpt" -o "$dir/window.json" --from 200us --to 1.2ms
expect_exit 0 "$GPUPERF" export "$dir/run.gpt" -o "$dir/window.perfetto-trace" --from 200us --to 1.2ms
python3 - "$dir/t.json" "$dir/cap.json" "$dir/window.json" <<'PY' || fail "window counts"
import json, sys
def events(path):
    return json.load(open(path))["traceEvents"]
def ns(e):
    return round(float(e["ts"]) * 1000)
whole, cap, window = (events(p) for p in sys.argv[1:])
kernels = sorted(ns(e) for e in whole if e.get("cat") == "kernel")
def kept(doc, cat):
    return [e for e in doc if e["ph"] == "X" and e.get("cat") == cat]
# The cap: the 123 earliest kernels; calls up to the 124th kernel's start.
assert len(kept(cap, "kernel")) == 123, len(kept(cap, "kernel"))
end = kernels[123]
calls = [e for e in whole if e["ph"] == "X" and e.get("cat") == "cuda_runtime"]
assert len(kept(cap, "cuda_runtime")) == sum(ns(e) < end for e in calls)
# The time window: [1 s + 200 us, 1 s + 1.2 ms).
lo, hi = 1_000_200_000, 1_001_200_000
want = sum(lo <= t < hi for t in kernels)
assert 0 < want < 500 and len(kept(window, "kernel")) == want, (want, len(kept(window, "kernel")))
assert len(kept(window, "cuda_runtime")) == sum(lo <= ns(e) < hi for e in calls)
# Arrows only where both ends are drawn, each with one start and one end.
starts = {e["id"] for e in window if e["ph"] == "s"}
ends = {e["id"] for e in window if e["ph"] == "f"}
assert starts == ends and starts, (len(starts), len(ends))
note = json.load(open(sys.argv[3]))["otherData"]["gpuperf_window"]
assert note.startswith("200 µs to 1.20 ms after the trace's start: left out %d kernels" % (500 - want)), note
PY
if command -v protoc >/dev/null; then
  decode_perfetto "$dir/window.perfetto-trace" "$dir/window.txt" || fail "cannot decode the window"
  want=$(python3 -c 'import json,sys; print(sum(1 for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "kernel"))' "$dir/window.json")
  got=$(grep -c 'stage_iid: 1$' "$dir/window.txt")
  [[ $got -eq $want ]] || fail "the Perfetto window has $got kernels, the JSON one $want"
  grep -q 'name: "gpuperf: window \\342\\200\\224 200 \\302\\265s to 1.20 ms' "$dir/window.txt" ||
    fail "no window marker in the Perfetto window"
fi
expect_exit 2 "$GPUPERF" export "$dir/run.gpt" --steps 1:2
expect_stderr_contains "no NVTX range named like a step" "$GPUPERF" export "$dir/run.gpt" --steps 1:2
expect_exit 2 "$GPUPERF" export "$dir/run.gpt" --steps 3:1
expect_exit 2 "$GPUPERF" export "$dir/run.gpt" --from 2ms --to 1ms
expect_exit 2 "$GPUPERF" export "$dir/run.gpt" -o "$dir/p.pb.gz" --max-kernels 5

# A timeline past the size a browser tab holds says so before it is written, with the
# options (a lower threshold stands in for a gigabyte); a small one says nothing.
err=$(GPUPERF_TIMELINE_NOTE_BYTES=10000 "$GPUPERF" export "$dir/run.gpt" -o "$dir/n.perfetto-trace" 2>&1 >/dev/null)
[[ $err == "gpuperf: note: this timeline will take about "*" (500 kernels), "*"--from/--to TIME, --steps A:B or --max-kernels N" ]] ||
  fail "no size note: $err"
err=$("$GPUPERF" export "$dir/run.gpt" -o "$dir/n.perfetto-trace" 2>&1 >/dev/null)
[[ -z $err ]] || fail "a small timeline printed: $err"

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
