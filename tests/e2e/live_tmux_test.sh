#!/usr/bin/env bash
# `gpuperf top` as a person sees it: run in a real terminal (a detached tmux session, as over
# ssh), the screen is captured and read, keys change the sort, q quits and gives the terminal
# back; a narrow terminal gets lines that fit.
source "$(dirname "$0")/lib.sh"
use_live_app tmux python3
socket=gpuperf-live-test-$$
tmux_() { tmux -L "$socket" -f /dev/null "$@"; }
live_at_exit() { tmux_ kill-server 2>/dev/null; }
# characters (not bytes: "µs", "…") of the longest line
widest() { python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")))' "$1"; }

record_live_app "$work/rec" 200 || finish

# screen: the pane's text now.
screen() { tmux_ capture-pane -p -t top > "$work/screen.txt" 2>/dev/null && cat "$work/screen.txt"; }
shows() { screen | grep -q -- "$1"; }

# A 150x40 terminal; top's exit status lands in a file once it ends.
tmux_ new-session -d -s top -x 150 -y 40 \
  "GPUPERF_LIVE_DIR='$GPUPERF_LIVE_DIR' '$GPUPERF' top --interval 0.3 --no-nvml; echo \$? > '$work/status'; sleep 30"
wait_until shows "vecAdd(float const\*, float const\*, float\*, int)" || fail "top never showed the kernel: $(screen)"
# API calls are drained apart from kernels: wait for the failing cudaMalloc too.
wait_until bash -c "tmux -L '$socket' capture-pane -p -t top | grep -qE '^ +$app_pid +3 +1 .*cudaMalloc'" ||
  fail "top never showed the failing cudaMalloc: $(screen)"
screen > "$work/first.txt"
grep -q "^gpuperf top - .* - 1 process - sorted by GPU active - .*keys: g k m a p (or s) sort, q quit" "$work/first.txt" \
  || fail "title line: $(head -1 "$work/first.txt")"
grep -qE "^ +$app_pid +- +0 .*3\.00 MiB +4\.00 MiB +0 +ok " "$work/first.txt" || fail "no row for the app: $(cat "$work/first.txt")"
grep -q "TOP KERNELS" "$work/first.txt" && grep -q "scale(float\*, int)" "$work/first.txt" || fail "kernel table"
grep -A3 "CUDA API" "$work/first.txt" | grep -qE "^ +$app_pid +3 +1 .*cudaMalloc" ||
  fail "the failing cudaMalloc is not listed first: $(cat "$work/first.txt")"
# Nothing scrolled or spilled: every line fits the 150 columns, the screen is 40 lines.
[[ $(widest "$work/first.txt") -le 150 ]] || fail "lines wider than the terminal"

tmux_ send-keys -t top m
wait_until shows "sorted by memory" || fail "m did not sort by memory: $(head -1 "$work/screen.txt")"
tmux_ send-keys -t top s
wait_until shows "sorted by API calls" || fail "s did not step to the next sort: $(head -1 "$work/screen.txt")"
tmux_ send-keys -t top k
wait_until shows "sorted by launches" || fail "k did not sort by launches"

# A narrow terminal: columns give way, nothing wraps.
tmux_ resize-window -t top -x 72 -y 30 2>/dev/null || tmux_ resize-pane -t top -x 72 -y 30
wait_until bash -c "tmux -L '$socket' capture-pane -p -t top | head -1 | grep -q '…'" || fail "the title was not cut to 72 columns"
screen > "$work/narrow.txt"
[[ $(widest "$work/narrow.txt") -le 72 ]] || fail "lines wider than 72 columns: $(cat "$work/narrow.txt")"
grep -qE "^ +$app_pid " "$work/narrow.txt" || fail "the app's row is gone in a narrow terminal: $(cat "$work/narrow.txt")"

tmux_ send-keys -t top q
wait_until test -s "$work/status" || fail "q did not end top"
[[ $(cat "$work/status" 2>/dev/null) == 0 ]] || fail "top exited $(cat "$work/status" 2>/dev/null) after q"
# The terminal is given back: the normal screen, with the cursor, and top's picture gone.
sleep 0.2
screen | grep -q "TOP KERNELS" && fail "top's screen stayed after it quit"
[[ $(tmux_ display -p -t top '#{alternate_on} #{cursor_flag}') == "0 1" ]] || fail "alternate screen or hidden cursor left behind"
finish
