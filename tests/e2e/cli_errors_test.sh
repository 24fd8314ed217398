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

# first_stderr CMD...: the first line the command writes to stderr.
first_stderr() { "$@" 2>&1 >/dev/null </dev/null | head -n 1; }
expect_first_stderr() {
  local want=$1; shift
  local got; got=$(first_stderr "$@")
  [[ $got == "$want" ]] || fail "'$*' said '$got', want '$want'"
}
commands="record, attach, metrics, dump-now, report, flamegraph, source, export, diff, top, serve, symbolize, dump"

# Unknown commands are named, with the list and the near misses.
expect_first_stderr "gpuperf: error: unknown command 'frobnicate' (commands: $commands)" \
  "$GPUPERF" frobnicate
expect_first_stderr \
  "gpuperf: error: unknown command 'reprot': did you mean 'report'? (commands: $commands)" \
  "$GPUPERF" reprot run/
expect_first_stderr \
  "gpuperf: error: unknown command 'flamegrahp': did you mean 'flamegraph'? (commands: $commands)" \
  "$GPUPERF" flamegrahp
expect_first_stderr "gpuperf: error: no command given (commands: $commands; see 'gpuperf --help')" \
  "$GPUPERF"
# CLI11's own errors read like ours: one line, the gpuperf prefix, where to find help.
expect_exit 2 "$GPUPERF" report --bogus "$dir/ok.gpt"
expect_first_stderr \
  "gpuperf: error: the following argument was not expected: --bogus (see 'gpuperf report --help')" \
  "$GPUPERF" report --bogus "$dir/ok.gpt"
expect_first_stderr "gpuperf: error: trace is required (see 'gpuperf dump --help')" \
  "$GPUPERF" dump
[[ $("$GPUPERF" report --bogus "$dir/ok.gpt" 2>&1 | wc -l) -eq 1 ]] ||
  fail "a bad option takes more than one line"

# record: one Usage line; a command that is not executable is not "not found".
usage=$("$GPUPERF" record --help | grep -c 'Usage:')
[[ $usage -eq 1 ]] || fail "record --help prints $usage Usage lines"
expect_output_contains "Usage: gpuperf record [OPTIONS] -- COMMAND [ARGS...]" "$GPUPERF" record --help
expect_exit 126 "$GPUPERF" record -o "$dir/rec" -- /etc/passwd
expect_first_stderr "gpuperf: error: /etc/passwd is not executable (not a file with execute permission)" \
  "$GPUPERF" record -o "$dir/rec" -- /etc/passwd
expect_exit 126 "$GPUPERF" record -o "$dir/rec" -- "$dir"
expect_exit 127 "$GPUPERF" record -o "$dir/rec" -- no-such-command-gpuperf
expect_first_stderr "gpuperf: error: command not found: no-such-command-gpuperf" \
  "$GPUPERF" record -o "$dir/rec" -- no-such-command-gpuperf

# A report JSON given where a trace is expected points at diff.
"$GPUPERF" report "$dir/ok.gpt" --json -o "$dir/base.json" || fail "report --json failed"
expect_exit 3 "$GPUPERF" report "$dir/base.json"
expect_stderr_contains "is a report (JSON), not a trace" "$GPUPERF" report "$dir/base.json"
expect_stderr_contains "gpuperf diff $dir/base.json NEW" "$GPUPERF" report "$dir/base.json"

# Output names with an extension we do not write are refused, and nothing is written;
# --format says what to write under any name; a name without extension gets the default
# and the summary says which.
expect_exit 2 "$GPUPERF" flamegraph "$dir/ok.gpt" -o "$dir/x.png"
expect_first_stderr "gpuperf: error: cannot tell what to write from the name $dir/x.png: use .svg (SVG), .folded, .collapsed or .txt (folded stacks), or --format svg|folded" \
  "$GPUPERF" flamegraph "$dir/ok.gpt" -o "$dir/x.png"
expect_exit 2 "$GPUPERF" export "$dir/ok.gpt" -o "$dir/x.txt"
expect_first_stderr "gpuperf: error: cannot tell the output format from the name $dir/x.txt: use .perfetto-trace, .pftrace or .pb (Perfetto), .json or .json.gz (Chrome JSON), .pb.gz or .pprof (pprof), .parquet (a directory of Parquet tables), or --format perfetto|chrome|pprof|parquet" \
  "$GPUPERF" export "$dir/ok.gpt" -o "$dir/x.txt"
[[ ! -e $dir/x.png && ! -e $dir/x.txt ]] || fail "a refused output name was written"
expect_exit 0 "$GPUPERF" flamegraph "$dir/ok.gpt" -o "$dir/x.png" --format svg
grep -q '<svg' "$dir/x.png" || fail "--format svg did not write an SVG"
expect_exit 0 "$GPUPERF" flamegraph "$dir/ok.gpt" -o "$dir/stacks.data" --format folded
grep -q ';' "$dir/stacks.data" || fail "--format folded did not write folded stacks"
expect_exit 2 "$GPUPERF" flamegraph "$dir/ok.gpt" -o "$dir/x.svg" --folded --format svg
expect_exit 0 "$GPUPERF" export "$dir/ok.gpt" -o "$dir/x.txt" --format chrome
grep -q traceEvents "$dir/x.txt" || fail "--format chrome did not write Chrome JSON"
expect_stderr_contains "-> $dir/flame (SVG)" "$GPUPERF" flamegraph "$dir/ok.gpt" -o "$dir/flame"
expect_output_contains "wrote $dir/timeline (Perfetto protobuf)" \
  "$GPUPERF" export "$dir/ok.gpt" -o "$dir/timeline"

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
