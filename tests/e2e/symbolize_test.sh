#!/usr/bin/env bash
# gpuperf symbolize on traces whose binaries are gone, on bad input, and on a directory.
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$SYNTH" -o "$dir/a.gpt" --kernels 100 >/dev/null || fail "synth failed"
"$SYNTH" -o "$dir/b.gpt" --kernels 100 --pid 77 >/dev/null || fail "synth failed"

# The synthetic trace's symbols are already there: nothing to do, and saying so.
expect_exit 0 "$GPUPERF" symbolize "$dir/a.gpt"
expect_output_contains "already symbolized" "$GPUPERF" symbolize "$dir/a.gpt"
before=$(stat -c %s "$dir/a.gpt")
"$GPUPERF" symbolize "$dir/a.gpt" >/dev/null 2>&1
[[ $(stat -c %s "$dir/a.gpt") -eq $before ]] || fail "re-symbolizing changed the file"

expect_exit 0 "$GPUPERF" symbolize "$dir"
expect_output_contains "in 2 files" "$GPUPERF" symbolize "$dir"

echo "hello" > "$dir/text.gpt"
expect_exit 3 "$GPUPERF" symbolize "$dir/text.gpt"
expect_stderr_contains "is not a gpuperf trace" "$GPUPERF" symbolize "$dir/text.gpt"
expect_exit 3 "$GPUPERF" symbolize "$dir/missing.gpt"
expect_exit 2 "$GPUPERF" symbolize

finish
