#!/usr/bin/env bash
# gpuperf report with several -o: the report and other commands' outputs from one read of
# the trace, each byte for byte what its own command writes.
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$SYNTH" -o "$dir/synth.gpt" --kernels 3000 >/dev/null || fail "synth failed"

# A recorded PyTorch run and a synthetic trace; every kind of output at once.
for trace in "$SRC/tests/data/h200/pytorch_transformer" "$dir/synth.gpt"; do
  name=$(basename "$trace" .gpt)
  out=$dir/$name
  mkdir -p "$out/alone" "$out/together"
  "$GPUPERF" report "$trace" -o "$out/alone/report.txt" 2>/dev/null || fail "$name: report"
  "$GPUPERF" flamegraph "$trace" -o "$out/alone/flame.svg" 2>/dev/null || fail "$name: flamegraph"
  "$GPUPERF" flamegraph "$trace" -o "$out/alone/flame.folded" 2>/dev/null || fail "$name: folded"
  for file in timeline.perfetto-trace timeline.json.gz profile.pb.gz; do
    "$GPUPERF" export "$trace" -o "$out/alone/$file" >/dev/null 2>&1 || fail "$name: export $file"
  done
  expect_exit 0 "$GPUPERF" report "$trace" -o "$out/together/report.txt" \
    -o "$out/together/flame.svg" -o "$out/together/flame.folded" \
    -o "$out/together/timeline.perfetto-trace" -o "$out/together/timeline.json.gz" \
    -o "$out/together/profile.pb.gz"
  for file in report.txt flame.svg flame.folded timeline.perfetto-trace timeline.json.gz \
      profile.pb.gz; do
    [[ -s $out/together/$file ]] || { fail "$name: no $file"; continue; }
    cmp -s "$out/alone/$file" "$out/together/$file" ||
      fail "$name: $file differs from the one its own command writes"
  done
done

# Without a report file the report goes to stdout, alone: what the other outputs say of
# themselves goes to stderr.
trace=$SRC/tests/data/h200/mock_transformer
"$GPUPERF" report "$trace" >"$dir/alone.txt" 2>/dev/null
"$GPUPERF" report "$trace" -o "$dir/f.svg" -o "$dir/t.perfetto-trace" >"$dir/stdout.txt" \
  2>"$dir/stderr.txt" || fail "report with two other outputs failed"
cmp -s "$dir/alone.txt" "$dir/stdout.txt" || fail "stdout holds more than the report"
grep -q "flamegraph: .* -> $dir/f.svg" "$dir/stderr.txt" || fail "no flame graph line on stderr"
grep -q "wrote $dir/t.perfetto-trace" "$dir/stderr.txt" || fail "no timeline line on stderr"

# A damaged trace: its read warnings are said once, not once per output.
cp "$dir/synth.gpt" "$dir/damaged.gpt"
size=$(stat -c %s "$dir/damaged.gpt")
printf '\xff\xff\xff\xff' | dd of="$dir/damaged.gpt" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
"$GPUPERF" report "$dir/damaged.gpt" -o "$dir/d.txt" 2>"$dir/alone_warnings.txt" ||
  fail "report of the damaged trace failed"
"$GPUPERF" report "$dir/damaged.gpt" -o "$dir/d2.txt" -o "$dir/d.svg" -o "$dir/d.perfetto-trace" \
  2>"$dir/warnings.txt" || fail "outputs of the damaged trace failed"
warnings_alone=$(grep -c "skipped a damaged chunk" "$dir/alone_warnings.txt")
warnings=$(grep -c "skipped a damaged chunk" "$dir/warnings.txt")
[[ $warnings_alone -ge 1 && $warnings -eq $warnings_alone ]] ||
  fail "damage said $warnings times with three outputs, $warnings_alone times alone"

# Two report files are refused; a failing output fails the command, the others are written.
expect_exit 2 "$GPUPERF" report "$trace" -o "$dir/a.txt" -o "$dir/b.json"
expect_stderr_contains "two report outputs" "$GPUPERF" report "$trace" -o "$dir/a.txt" \
  -o "$dir/b.json"
expect_exit 1 "$GPUPERF" report "$trace" -o "$dir/ok.txt" -o "$dir/no/such/dir/f.svg"
[[ -s $dir/ok.txt ]] || fail "the report was not written beside a failing flame graph"

finish
