#!/usr/bin/env bash
# gpuperf flamegraph end to end: output formats, exact weights, options, bad input.
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$SYNTH" -o "$dir/t.gpt" --kernels 3000 >/dev/null || fail "synth failed"

# GPU time of every kernel and copy, from the dump: the folded weights must add up to it.
total_ns=$("$GPUPERF" dump "$dir/t.gpt" | awk '/^(kernel|memcpy|memset) / {
  for (i = 1; i <= NF; i++) { if ($i ~ /^start_ns=/) s = substr($i, 10); if ($i ~ /^end_ns=/) e = substr($i, 8) }
  t += e - s } END { printf "%d", t }')
activities=$("$GPUPERF" dump "$dir/t.gpt" | grep -cE '^(kernel|memcpy|memset) ')
sum_weights() { awk '{ t += $NF } END { printf "%d", t }' "$1"; }

# SVG to a file, with the one-line summary on stderr.
expect_exit 0 "$GPUPERF" flamegraph "$dir/t.gpt" -o "$dir/f.svg"
err=$("$GPUPERF" flamegraph "$dir/t.gpt" -o "$dir/f.svg" 2>&1 >/dev/null)
[[ $err == *"3,000/3,000 kernels joined, unmatched 0"* ]] || fail "summary line: $err"
[[ $err == *"-> $dir/f.svg"* ]] || fail "summary lacks the output path: $err"
[[ $(wc -l <<<"$err") -eq 1 ]] || fail "summary is not one line: $err"
head -c 100 "$dir/f.svg" | grep -q '^<?xml' || fail "f.svg is not an SVG"
tail -n 1 "$dir/f.svg" | grep -q '</svg>' || fail "f.svg is incomplete"
if command -v python3 >/dev/null; then
  python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$dir/f.svg" ||
    fail "f.svg is not well-formed XML"
fi

# Folded to stdout and to a .folded file: same text, exact nanoseconds.
"$GPUPERF" flamegraph "$dir/t.gpt" --folded > "$dir/a.folded" 2>/dev/null || fail "--folded failed"
"$GPUPERF" flamegraph "$dir/t.gpt" -o "$dir/b.folded" 2>/dev/null || fail "-o x.folded failed"
cmp -s "$dir/a.folded" "$dir/b.folded" || fail "stdout and .folded outputs differ"
[[ $(sum_weights "$dir/a.folded") -eq $total_ns ]] ||
  fail "folded weights sum to $(sum_weights "$dir/a.folded"), GPU time is $total_ns"
grep -vqE '^[^ ].*;\[GPU[0-9]+\] [^;]+ [0-9]+$' "$dir/a.folded" && fail "malformed folded line"
grep -q ';cudaLaunchKernel;\[GPU0\] ' "$dir/a.folded" || fail "no launch API frame before the kernel"
grep -q ';cudaMemcpyAsync;\[GPU[01]\] memcpy HtoD ' "$dir/a.folded" || fail "copies lack their frame"

"$GPUPERF" flamegraph "$dir/t.gpt" --folded --weight count > "$dir/count.folded" 2>/dev/null
[[ $(sum_weights "$dir/count.folded") -eq $activities ]] || fail "count weights != $activities"

"$GPUPERF" flamegraph "$dir/t.gpt" --folded --inverted > "$dir/inv.folded" 2>/dev/null
grep -vq '^\[GPU' "$dir/inv.folded" && fail "inverted lines must start with the GPU frame"
[[ $(sum_weights "$dir/inv.folded") -eq $total_ns ]] || fail "inverted weights differ"

"$GPUPERF" flamegraph "$dir/t.gpt" --folded --kernel 'sgemm|softmax' > "$dir/k.folded" 2>/dev/null
[[ -s "$dir/k.folded" ]] || fail "--kernel kept nothing"
grep -vqE '(sgemm|softmax)[^;]* [0-9]+$' "$dir/k.folded" && fail "--kernel kept a non-matching kernel"
expect_stderr_contains "filtered out" "$GPUPERF" flamegraph "$dir/t.gpt" --folded --kernel sgemm

"$GPUPERF" flamegraph "$dir/t.gpt" --folded --split-by device > "$dir/d.folded" 2>/dev/null
[[ $(cut -d';' -f1 "$dir/d.folded" | sort -u | tr '\n' ' ') == "[GPU0] [GPU1] " ]] ||
  fail "--split-by device roots: $(cut -d';' -f1 "$dir/d.folded" | sort -u | tr '\n' ' ')"

"$GPUPERF" flamegraph "$dir/t.gpt" --folded --full-names --no-demangle > "$dir/m.folded" 2>/dev/null
grep -q '\] _ZN2at6native' "$dir/m.folded" || fail "--no-demangle shows demangled kernel names"
"$GPUPERF" flamegraph "$dir/t.gpt" --folded --full-names > "$dir/full.folded" 2>/dev/null
grep -q '\] void at::native::' "$dir/full.folded" || fail "--full-names lost the signature"

# A directory of two processes: one root frame per process; --pid keeps one.
mkdir "$dir/run"
"$SYNTH" -o "$dir/run/a.gpt" --kernels 500 --pid 100 >/dev/null
"$SYNTH" -o "$dir/run/b.gpt" --kernels 500 --pid 200 --seed 2 >/dev/null
"$GPUPERF" flamegraph "$dir/run" --folded > "$dir/run.folded" 2>/dev/null || fail "directory input"
[[ $(cut -d';' -f1 "$dir/run.folded" | sort -u | cut -d' ' -f1,2 | tr '\n' '|') == "[pid 100]|[pid 200]|" ]] ||
  fail "process root frames: $(cut -d';' -f1 "$dir/run.folded" | sort -u | head -3)"
"$GPUPERF" flamegraph "$dir/run" --folded --pid 200 > "$dir/pid.folded" 2>/dev/null
grep -q '^\[pid' "$dir/pid.folded" && fail "--pid still shows process frames"
[[ -s "$dir/pid.folded" ]] || fail "--pid 200 kept nothing"

# Bad input and bad options: one message, the right exit code.
expect_exit 2 "$GPUPERF" flamegraph "$dir/t.gpt" --folded --kernel '(['
expect_stderr_contains "bad kernel regex" "$GPUPERF" flamegraph "$dir/t.gpt" --folded --kernel '(['
expect_exit 2 "$GPUPERF" flamegraph "$dir/t.gpt" --split-by bogus
expect_exit 2 "$GPUPERF" flamegraph "$dir/t.gpt" --weight bytes
expect_exit 2 "$GPUPERF" flamegraph
expect_exit 3 "$GPUPERF" flamegraph "$dir/missing.gpt" -o "$dir/x.svg"
echo "not a trace" > "$dir/text.gpt"
expect_exit 3 "$GPUPERF" flamegraph "$dir/text.gpt" -o "$dir/x.svg"
expect_exit 1 "$GPUPERF" flamegraph "$dir/t.gpt" -o "$dir/no/such/dir/x.svg"
expect_stderr_contains "cannot write" "$GPUPERF" flamegraph "$dir/t.gpt" -o "$dir/no/such/dir/x.svg"

finish
