#!/usr/bin/env bash
# `gpuperf report` fits a terminal: in a pseudo-terminal with COLUMNS=100 every line is
# at most 100 characters (long kernel names end in "…", the numbers stay whole); into a
# pipe or a file the report keeps its full width, as the goldens expect.
source "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null; then
  echo "SKIP: python3 is not installed"
  exit 77
fi
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$SYNTH" -o "$dir/t.gpt" --kernels 3000 >/dev/null || fail "synth failed"

# The widest line, in characters, of a UTF-8 file.
widest() { python3 -c 'import sys; print(max(len(l.rstrip("\r\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$1"; }

# In a pseudo-terminal (the child's stdout is the terminal); the output is read back
# through its master side.
COLUMNS=100 python3 - "$GPUPERF" "$dir/t.gpt" > "$dir/tty.txt" <<'PY' || fail "report in a terminal failed"
import os, pty, sys
pid, master = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "report", sys.argv[2]])
chunks = []
while True:
    try:
        data = os.read(master, 65536)
    except OSError:
        break
    if not data:
        break
    chunks.append(data)
_, status = os.waitpid(pid, 0)
sys.stdout.write(b"".join(chunks).decode("utf-8").replace("\r\n", "\n"))
sys.exit(os.waitstatus_to_exitcode(status))
PY
COLUMNS=100 "$GPUPERF" report "$dir/t.gpt" > "$dir/pipe.txt" 2>/dev/null || fail "report into a file failed"

tty_width=$(widest "$dir/tty.txt")
pipe_width=$(widest "$dir/pipe.txt")
echo "widest line: $tty_width in a 100-column terminal, $pipe_width into a file"
(( tty_width <= 100 )) || fail "terminal: a line of $tty_width characters: $(awk 'length > 100' "$dir/tty.txt" | head -1)"
(( pipe_width > 100 )) || fail "file: the widest line is $pipe_width: the test proves nothing"
grep -q "…" "$dir/tty.txt" || fail "terminal: no name was cut"
grep -q "ampere_sgemm_128x64_tn" "$dir/pipe.txt" || fail "file: a kernel name is missing"
grep -q "Time%" "$dir/tty.txt" || fail "terminal: no kernel table: $(head -5 "$dir/tty.txt")"
# The numbers of a kernel row are the same either way; only the name is cut.
[[ "$(grep -m1 'layerNorm' "$dir/tty.txt" | awk '{print $1, $2, $3}')" == \
   "$(grep -m1 'layerNorm' "$dir/pipe.txt" | awk '{print $1, $2, $3}')" ]] ||
  fail "terminal and file disagree on the numbers of a kernel row"

finish
