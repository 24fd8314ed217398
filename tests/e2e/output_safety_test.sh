#!/usr/bin/env bash
# Outputs: a failed command leaves what the user had exactly as it was (regular files,
# FIFOs, devices, directories, links), never a truncated file or a temporary one; and a
# write that fails is an error, one line and a non-zero exit, for every command.
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$SYNTH" -o "$dir/t.gpt" --kernels 2000 >/dev/null || fail "synth failed"
echo "hello" > "$dir/text.gpt"

# expect_first_stderr LINE CMD...: the command's stderr starts with LINE.
expect_first_stderr() {
  local want=$1; shift
  local got; got=$("$@" 2>&1 >/dev/null | head -n 1)
  [[ $got == "$want"* ]] || fail "first stderr line of '$*' is '$got', want '$want...'"
}
no_temporaries() {
  local left; left=$(find "$dir" -name '*.gpuperf-*')
  [[ -z $left ]] || fail "temporary files left behind: $left"
}

# --- An existing file survives a failed export: bad input, then a failed write. ---
echo precious > "$dir/keep.perfetto-trace"
expect_exit 3 "$GPUPERF" export "$dir/text.gpt" -o "$dir/keep.perfetto-trace"
[[ $(cat "$dir/keep.perfetto-trace" 2>/dev/null) == precious ]] ||
  fail "a failed export destroyed the existing -o file"

# A write that fails half-way (a 1 KiB file size limit; SIGXFSZ ignored so write() says
# EFBIG): the old content stays, no truncated file, no temporary file.
limited() { (trap '' XFSZ; ulimit -f 1; "$@"); }
for out in keep.perfetto-trace keep.json.gz keep.svg keep.folded keep.txt; do
  echo precious > "$dir/$out"
  case $out in
    *.svg | *.folded) cmd=(flamegraph "$dir/t.gpt" -o "$dir/$out") ;;
    *.txt) cmd=(report "$dir/t.gpt" -o "$dir/$out") ;;
    *) cmd=(export "$dir/t.gpt" -o "$dir/$out") ;;
  esac
  expect_exit 1 limited "$GPUPERF" "${cmd[@]}"
  expect_first_stderr "gpuperf: error: writing $dir/$out: File too large" limited "$GPUPERF" "${cmd[@]}"
  [[ $(cat "$dir/$out") == precious ]] || fail "${cmd[0]}: a failed write changed $out"
done
# A new name whose write fails leaves nothing.
expect_exit 1 limited "$GPUPERF" flamegraph "$dir/t.gpt" -o "$dir/new.svg"
[[ ! -e $dir/new.svg ]] || fail "a failed write left a truncated new.svg"
no_temporaries

# Success replaces the file and keeps its permissions; a link stays a link.
echo precious > "$dir/mode.svg" && chmod 600 "$dir/mode.svg"
expect_exit 0 "$GPUPERF" flamegraph "$dir/t.gpt" -o "$dir/mode.svg"
[[ $(stat -c %a "$dir/mode.svg") == 600 ]] || fail "replacing mode.svg changed its mode"
grep -q '<svg' "$dir/mode.svg" || fail "mode.svg was not replaced by the SVG"
echo old > "$dir/real.svg" && ln -s real.svg "$dir/link.svg"
expect_exit 0 "$GPUPERF" flamegraph "$dir/t.gpt" -o "$dir/link.svg"
[[ -L $dir/link.svg ]] || fail "writing through a symbolic link replaced the link"
grep -q '<svg' "$dir/real.svg" || fail "the file behind the link was not written"
no_temporaries

# The input is never the output.
cp "$dir/t.gpt" "$dir/same.gpt"
expect_exit 2 "$GPUPERF" report "$dir/same.gpt" -o "$dir/same.gpt"
cmp -s "$dir/t.gpt" "$dir/same.gpt" || fail "report -o INPUT overwrote the trace"

# --- Non-regular targets: written in place or refused, never removed or replaced. ---
mkfifo "$dir/fifo"
exec 3<>"$dir/fifo"  # a reader (and writer), so opening the FIFO cannot block
expect_exit 3 timeout 5 "$GPUPERF" export "$dir/text.gpt" -o "$dir/fifo"
exec 3>&-
[[ -p $dir/fifo ]] || fail "a failed export removed the FIFO given as -o"
# A FIFO nobody reads is refused at once instead of waited on.
expect_exit 1 timeout 5 "$GPUPERF" export "$dir/t.gpt" -o "$dir/fifo"
expect_first_stderr "gpuperf: error: cannot write $dir/fifo: it is a FIFO that no process is reading" \
  timeout 5 "$GPUPERF" export "$dir/t.gpt" -o "$dir/fifo"
[[ -p $dir/fifo ]] || fail "the FIFO given as -o is gone"
mkdir "$dir/outdir"
expect_exit 2 "$GPUPERF" flamegraph "$dir/t.gpt" -o "$dir/outdir"
expect_first_stderr "gpuperf: error: $dir/outdir is a directory: not writing over it" \
  "$GPUPERF" flamegraph "$dir/t.gpt" -o "$dir/outdir"
[[ -d $dir/outdir ]] || fail "the directory given as -o is gone"
# Character devices are written in place: /dev/null works; /dev/full fails with one line.
# (Only once the FIFO above survived: a build that removes -o on failure must not get
# near a device node.)
if [[ -p $dir/fifo ]]; then
  expect_exit 0 "$GPUPERF" export "$dir/t.gpt" -o /dev/null
  expect_exit 1 "$GPUPERF" export "$dir/t.gpt" -o /dev/full
  expect_first_stderr "gpuperf: error: writing /dev/full: No space left on device" \
    "$GPUPERF" report "$dir/t.gpt" -o /dev/full
  [[ -c /dev/null && -c /dev/full ]] || fail "a device node given as -o was replaced"
fi
no_temporaries

# An interrupted export removes its temporary file and leaves the target alone.
"$SYNTH" -o "$dir/big.gpt" --kernels 400000 >/dev/null || fail "synth failed"
echo precious > "$dir/big.json"
"$GPUPERF" export "$dir/big.gpt" -o "$dir/big.json" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do
  [[ -n $(find "$dir" -name '.big.json.gpuperf-*') ]] && break
  sleep 0.02
done
kill -TERM $pid
wait $pid
[[ $? -eq 143 ]] || echo "note: the export ended before SIGTERM reached it" >&2
[[ $(cat "$dir/big.json") == precious ]] || fail "an interrupted export changed big.json"
no_temporaries

# --- A failed write to stdout is an error for every command. ---
"$GPUPERF" report "$dir/t.gpt" --json -o "$dir/base.json" || fail "report --json failed"
for cmd in "dump $dir/t.gpt" "report $dir/t.gpt" "report $dir/t.gpt --format csv" \
  "report $dir/t.gpt --json" "diff $dir/base.json $dir/t.gpt" "flamegraph $dir/t.gpt --folded" \
  "flamegraph $dir/t.gpt -o -" "export $dir/t.gpt -o -" "symbolize $dir/t.gpt" "--help" \
  "--version" "report --help"; do
  read -ra args <<<"$cmd"
  "$GPUPERF" "${args[@]}" >/dev/full 2>"$dir/err"
  code=$?
  [[ $code -ne 0 ]] || fail "gpuperf $cmd >/dev/full exited 0"
  [[ $(head -n 1 "$dir/err") == "gpuperf: error: writing stdout: No space left on device" ]] ||
    fail "gpuperf $cmd >/dev/full said: $(head -n 1 "$dir/err")"
done

finish
