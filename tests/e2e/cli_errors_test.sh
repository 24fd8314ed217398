#!/usr/bin/env bash
# The CLI on bad input: one clear message, a non-zero exit, never a crash.
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$SYNTH" -o "$dir/ok.gpt" --kernels 200 >/dev/null || fail "synth failed"

expect_exit 0 "$GPUPERF" --version
expect_output_contains "gpuperf $( "$GPUPERF" --version | awk '{print $2}')" "$GPUPERF" --version
expect_exit 0 "$GPUPERF" --help
expect_exit 2 "$GPUPERF"
expect_exit 2 "$GPUPERF" no-such-command

expect_exit 0 "$GPUPERF" dump "$dir/ok.gpt"
expect_output_contains "kernel pid=4242" "$GPUPERF" dump "$dir/ok.gpt"

: > "$dir/empty.gpt"
expect_exit 3 "$GPUPERF" dump "$dir/empty.gpt"
expect_stderr_contains "is empty" "$GPUPERF" dump "$dir/empty.gpt"

echo "hello" > "$dir/text.gpt"
expect_exit 3 "$GPUPERF" dump "$dir/text.gpt"
expect_stderr_contains "is not a gpuperf trace" "$GPUPERF" dump "$dir/text.gpt"

expect_exit 3 "$GPUPERF" dump "$dir/missing.gpt"
expect_stderr_contains "no such file" "$GPUPERF" dump "$dir/missing.gpt"

# A truncated trace: exit 0, a warning, and every complete chunk's records.
size=$(stat -c %s "$dir/ok.gpt")
head -c $((size - 10)) "$dir/ok.gpt" > "$dir/cut.gpt"
expect_exit 0 "$GPUPERF" dump "$dir/cut.gpt"
expect_stderr_contains "ends inside a chunk" "$GPUPERF" dump "$dir/cut.gpt"
full=$("$GPUPERF" dump "$dir/ok.gpt" | grep -c '^kernel ')
cut=$("$GPUPERF" dump "$dir/cut.gpt" 2>/dev/null | grep -c '^kernel ')
[[ $full -eq 200 ]] || fail "expected 200 kernels, dump shows $full"
[[ $cut -gt 0 && $cut -le $full ]] || fail "truncated trace lost every kernel ($cut)"

finish
