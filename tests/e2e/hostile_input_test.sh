#!/usr/bin/env bash
# Inputs that could hang a command or mislead it: a FIFO with no writer, a character
# device, a FIFO inside a directory of traces, chunks out of order or repeated. Each is refused at once with one line, or
# skipped with a warning while the rest is read.
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$SYNTH" -o "$dir/t.gpt" --kernels 200 >/dev/null || fail "synth failed"
mkfifo "$dir/fifo.gpt"

# run_bounded CMD...: runs it with stdin closed and a 5 s bound; sets $code and $err.
run_bounded() {
  err=$(timeout 5 "$@" 2>&1 >/dev/null </dev/null)
  code=$?
}

for cmd in dump report flamegraph export symbolize; do
  args=("$cmd" "$dir/fifo.gpt")
  [[ $cmd == flamegraph ]] && args+=(--folded)
  [[ $cmd == export ]] && args+=(-o "$dir/out.json")
  run_bounded "$GPUPERF" "${args[@]}"
  [[ $code -eq 3 ]] || fail "$cmd on a FIFO: exit $code (124 is a hang), want 3"
  [[ $err == "gpuperf: error: $dir/fifo.gpt is a FIFO, not a trace file" ]] ||
    fail "$cmd on a FIFO said: $err"
done
run_bounded "$GPUPERF" diff "$dir/t.gpt" "$dir/fifo.gpt"
[[ $code -eq 3 && $err == *"is a FIFO, not a trace file" ]] || fail "diff on a FIFO: $code $err"

# /dev/zero is not "empty": it is not a file at all.
run_bounded "$GPUPERF" report /dev/zero
[[ $code -eq 3 && $err == "gpuperf: error: /dev/zero is a character device, not a trace file" ]] ||
  fail "report /dev/zero: exit $code: $err"

# In a directory, a FIFO named *.gpt is skipped with a warning; the trace beside it is read.
mkdir "$dir/run"
cp "$dir/t.gpt" "$dir/run/a.gpt"
mkfifo "$dir/run/b.gpt"
run_bounded "$GPUPERF" dump "$dir/run"
[[ $code -eq 0 ]] || fail "dump of a directory with a FIFO: exit $code"
[[ $err == *"skipped $dir/run/b.gpt is a FIFO, not a trace file"* ]] ||
  fail "the skipped FIFO is not mentioned: $err"
kernels=$(timeout 5 "$GPUPERF" dump "$dir/run" 2>/dev/null | grep -c '^kernel ')
[[ $kernels -eq 200 ]] || fail "the regular trace beside the FIFO gave $kernels kernels, want 200"

# A trace's chunks rearranged. chunks FILE prints "offset size type" for each chunk.
chunks() {
  local pos=16 total size type
  total=$(stat -c %s "$1")
  while ((pos + 24 <= total)); do
    type=$(od -An -tu2 -j$((pos + 4)) -N2 "$1" | tr -d ' ')
    size=$(od -An -tu4 -j$((pos + 8)) -N4 "$1" | tr -d ' ')
    echo "$pos $((24 + size)) $type"
    pos=$((pos + 24 + size))
  done
}
chunk() { tail -c +$(($2 + 1)) "$1" | head -c "$3"; }  # FILE OFFSET SIZE
chunks "$dir/t.gpt" > "$dir/chunks"
# Strings moved after the records that name them: out of order, which is not damage.
{
  head -c 16 "$dir/t.gpt"
  while read -r offset size type; do [[ $type != 30 ]] && chunk "$dir/t.gpt" "$offset" "$size"; done < "$dir/chunks"
  while read -r offset size type; do [[ $type == 30 ]] && chunk "$dir/t.gpt" "$offset" "$size"; done < "$dir/chunks"
} > "$dir/reordered.gpt"
err=$("$GPUPERF" dump "$dir/reordered.gpt" 2>&1 >/dev/null)
[[ $err == "gpuperf: warning: $dir/reordered.gpt: "*" references to names or stacks defined only after their use: the file's chunks are out of order (was it edited or spliced?)" ]] ||
  fail "chunks out of order: $err"
# A kernel chunk repeated byte for byte: read once, with a word.
read -r offset size _ < <(grep ' 5$' "$dir/chunks" | head -1)
{ cat "$dir/t.gpt"; chunk "$dir/t.gpt" "$offset" "$size"; } > "$dir/repeated.gpt"
kernels=$("$GPUPERF" dump "$dir/repeated.gpt" 2>"$dir/repeated.err" | grep -c '^kernel ')
[[ $kernels -eq 200 ]] || fail "a repeated kernel chunk: $kernels kernels, want 200"
[[ $(cat "$dir/repeated.err") == "gpuperf: warning: $dir/repeated.gpt: skipped 1 chunk that repeats an earlier one byte for byte (its records would count twice)" ]] ||
  fail "a repeated kernel chunk: $(cat "$dir/repeated.err")"

finish
