#!/usr/bin/env bash
# Every output says when a trace lost data (issue 18): the SVG draws a red DATA LOSS line,
# Perfetto and Chrome JSON carry a "gpuperf: data loss" marker (Chrome also in otherData),
# folded stacks say it on stderr and keep their text clean, and diff counts it for
# --fail-if. Undamaged traces show none of it.
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
good=$SRC/tests/data/h100/mock_transformer/mock_transformer.525.gpt
cp "$good" "$dir/good.gpt"

# Damaged copies of a real recording.
head -c 16 "$good" > "$dir/header_only.gpt"   # the file header, no chunk
head -c 200 "$good" > "$dir/cut_first.gpt"    # ends inside its first chunk
python3 - "$good" "$dir/no_middle.gpt" <<'PY'  # the middle chunks dropped
import struct, sys
data = open(sys.argv[1], "rb").read()
chunks, pos = [], 16
while pos < len(data):
    payload = struct.unpack_from("<I", data, pos + 8)[0]
    chunks.append(data[pos:pos + 24 + payload]); pos += 24 + payload
assert len(chunks) > 8, len(chunks)
open(sys.argv[2], "wb").write(data[:16] + b"".join(chunks[:3] + chunks[-3:]))
PY
mkdir "$dir/with_fifo"
cp "$good" "$dir/with_fifo/a.gpt"
mkfifo "$dir/with_fifo/b.gpt"

# What each damaged input's DATA LOSS line must name.
declare -A says=(
  [header_only.gpt]="no complete chunk: nothing recoverable"
  [cut_first.gpt]="the trace ends inside a chunk"
  [no_middle.gpt]="pid 525 process_incomplete"
  [with_fifo]="1 trace file skipped")

for input in header_only.gpt cut_first.gpt no_middle.gpt with_fifo; do
  in=$dir/$input want=${says[$input]}
  # SVG: a visible red line under the title.
  timeout 60 "$GPUPERF" flamegraph "$in" -o "$dir/out.svg" 2>/dev/null || fail "flamegraph $input"
  grep -q "id=\"data-loss\" [^>]*style=\"fill:#c00[^>]*>DATA LOSS: [^<]*$want" "$dir/out.svg" ||
    fail "SVG of $input has no DATA LOSS line naming '$want'"

  # Folded: one line on stderr, nothing in the stacks.
  timeout 60 "$GPUPERF" flamegraph "$in" --folded -o "$dir/out.folded" 2>"$dir/err" ||
    fail "folded $input"
  [[ $(grep -c "^gpuperf: warning: DATA LOSS: .*$want" "$dir/err") -eq 1 ]] ||
    fail "folded $input: no single DATA LOSS line on stderr: $(cat "$dir/err")"
  ! grep -q "DATA LOSS" "$dir/out.folded" || fail "folded $input: the loss line leaked into the stacks"

  # Chrome JSON: trace metadata and a marker event on a track of its own.
  timeout 60 "$GPUPERF" export "$in" -o "$dir/out.json" >/dev/null 2>&1 || fail "export json $input"
  python3 - "$dir/out.json" "$want" <<'PY' || fail "Chrome JSON of $input lacks the data-loss metadata or marker"
import json, sys
doc = json.load(open(sys.argv[1]))
want = sys.argv[2]
assert want in doc["otherData"]["gpuperf_data_loss"], doc["otherData"]
marks = [e for e in doc["traceEvents"] if e["ph"] == "i" and e["name"].startswith("gpuperf: data loss")]
assert len(marks) == 1 and want in marks[0]["name"], marks
names = [e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"]
assert "gpuperf: data loss" in names, names
PY

  # Perfetto: the marker track and its instant event.
  timeout 60 "$GPUPERF" export "$in" -o "$dir/out.perfetto-trace" >/dev/null 2>&1 ||
    fail "export perfetto $input"
  if command -v protoc >/dev/null; then
    decode_perfetto "$dir/out.perfetto-trace" "$dir/decoded.txt" || fail "protoc cannot decode $input's export"
    grep -q 'name: "gpuperf: data loss"' "$dir/decoded.txt" || fail "Perfetto of $input: no marker track"
    grep -q "gpuperf: data loss .*$want" "$dir/decoded.txt" || fail "Perfetto of $input: no marker event"
  fi

  # diff: the loss is counted, so a data-loss gate fails.
  timeout 60 "$GPUPERF" diff "$dir/good.gpt" "$in" --fail-if 'data_loss>0' >"$dir/diff.txt" 2>&1
  rc=$?
  [[ $rc -ne 0 ]] || fail "diff --fail-if 'data_loss>0' passes with $input"
  grep -q "regression: lost: records+bytes+chunks+files 0 -> [1-9]" "$dir/diff.txt" ||
    fail "diff text of $input does not count its loss: $(cat "$dir/diff.txt")"
done

# Report: a header-only trace and a skipped file are loss, not warnings.
for input in header_only.gpt with_fifo; do
  out=$(timeout 60 "$GPUPERF" report "$dir/$input" 2>/dev/null)
  [[ $out == *"!! DATA LOSS"* ]] || fail "report of $input has no DATA LOSS banner"
done

# Undamaged: none of it, and the gate passes.
timeout 60 "$GPUPERF" flamegraph "$dir/good.gpt" -o "$dir/ok.svg" 2>/dev/null
! grep -q 'data-loss' "$dir/ok.svg" || fail "undamaged SVG shows a data-loss line"
timeout 60 "$GPUPERF" flamegraph "$dir/good.gpt" --folded -o "$dir/ok.folded" 2>"$dir/err"
! grep -q "DATA LOSS" "$dir/err" || fail "undamaged folded warns of data loss"
timeout 60 "$GPUPERF" export "$dir/good.gpt" -o "$dir/ok.json" >/dev/null 2>&1
! grep -q "gpuperf_data_loss\|gpuperf: data loss" "$dir/ok.json" || fail "undamaged JSON has a data-loss marker"
expect_exit 0 timeout 60 "$GPUPERF" diff "$dir/good.gpt" "$dir/good.gpt" --fail-if 'data_loss>0'

finish
