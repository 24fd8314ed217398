#!/usr/bin/env bash
# Root's `top` and `serve` read every user's live directory (docs/live.md, "What root's top
# and serve trust"): another user cannot hang, slow or steer them through it. As root, with
# a program recorded by `nobody` (its real page) and, in nobody's live directory beside it,
# what nobody (or anyone) can put there: a FIFO named like a page, a symbolic link to a
# root-only page, a page owned by another user, an oversized page, and a page that names
# root's process. Each is named after a live process of nobody's (so that it is not taken for
# a page of an ended process). `top --once` (text and JSON) and a scrape of `serve` show the
# real process with its exact counts, none of the others, and one line for each of them;
# nothing is removed or created in nobody's directory.
source "$(dirname "$0")/lib.sh"
use_live_app setpriv python3 curl
[[ $(id -u) -eq 0 ]] || { echo "skip: needs root (root's top and serve read other users' pages)"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "skip: no user nobody"; exit 77; }
nobody=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --inh-caps=-all)
as_nobody() { "${nobody[@]}" "$@"; }
as_nobody test -x "$GPUPERF" -a -r "$lib" ||
  { echo "skip: nobody cannot run $GPUPERF (a build directory only root can read)"; exit 77; }
unset GPUPERF_LIVE_DIR  # root's default: every user's directory
uid=$(id -u nobody)
base=/dev/shm; [[ -d $base ]] || base=/tmp
live=$base/gpuperf-$uid
chmod 755 "$work"
mkdir "$work/nobody" && chown nobody "$work/nobody"
planted=()
# Only what this test planted goes: other tests may record as nobody meanwhile.
live_at_exit() { for name in "${planted[@]}"; do rm -f "$live/$name"; done; }

# --- nobody's real recording ---
record_live_app "$work/nobody/rec" 200 "${nobody[@]}" || finish
page_complete() {
  timeout 20 "$GPUPERF" top --once --format json --pid "$app_pid" > "$work/first.json" 2>/dev/null &&
    python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))["processes"]
sys.exit(0 if p and p[0]["devices"][0]["kernels"] == int(sys.argv[2]) else 1)' "$work/first.json" "$kernels" 2>/dev/null
}
wait_until page_complete || { fail "root's top never showed nobody's page $live/$app_pid.live"; finish; }

# --- what nobody plants, each named after a process of nobody's ---
others=()
for _ in 1 2 3 4; do
  "${nobody[@]}" sleep infinity &  # a process of nobody's to name a page after; killed at exit
  pids+=($!)
  others+=($!)
done
fifo=${others[0]} link=${others[1]} foreign=${others[2]} big=${others[3]} root_pid=$$
planted=("$fifo.live" "$link.live" "$foreign.live" "$big.live" "$root_pid.live")
as_nobody mkfifo "$live/$fifo.live"
mkdir -m 700 "$work/root-only"
"$holder" "$work/root-only" forge "$link" || fail "cannot forge a root-only page"
as_nobody ln -s "$work/root-only/$link.live" "$live/$link.live"
as_nobody "$holder" "$live" forge "$foreign" && chown 12345 "$live/$foreign.live"
as_nobody "$holder" "$live" forge "$big" && as_nobody truncate -s 1G "$live/$big.live"
as_nobody "$holder" "$live" forge "$root_pid"
for name in "${planted[@]}"; do [[ -e $live/$name || -L $live/$name ]] || fail "could not plant $live/$name"; done
# What each is (inode, type, owner, size), to see that root changed none of them.
files() { (cd "$live" && stat -c '%n %i %F %u %s' "${planted[@]}" "$app_pid.live"); }
before=$(files)

# The lines that say why each was skipped.
expected=(
  "$live/$fifo.live: a FIFO, not a live page"
  "$live/$link.live: a symbolic link, not a live page"
  "$live/$foreign.live: belongs to uid 12345, not to uid $uid whose directory it is in"
  "$live/$big.live: 1073741824 bytes, more than a live page can be"
  "$live/$root_pid.live: names pid $root_pid, a process of uid 0, not of uid $uid"
)

# --- top --once --format json ---
timeout 60 "$GPUPERF" top --once --format json > "$work/top.json" 2> "$work/top.err"
rc=$?
[[ $rc -eq 0 ]] || fail "top --once --format json exited $rc: $(head -3 "$work/top.err")"
python3 - "$work/top.json" "$live/" "$app_pid" "$kernels" "${others[*]} $root_pid" "${expected[@]}" <<'EOF' || fail "top --once --format json: $(head -c 1500 "$work/top.json")"
import json, sys
data = json.load(open(sys.argv[1]))
prefix, app_pid, kernels = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
planted = {int(p) for p in sys.argv[5].split()}
expected = sys.argv[6:]
bad = []
shown = {p["pid"]: p for p in data["processes"]}
if app_pid not in shown or shown[app_pid]["devices"][0]["kernels"] != kernels:
    bad.append(f"the real process {app_pid} with {kernels} kernels is not shown")
bad += [f"planted page of pid {p} shown" for p in planted & set(shown)]
# Only the pages this test planted: another suite on the machine may plant its own in
# nobody's directory meanwhile (two clean-clone runs at once did).
ours = sorted(line for line in data["skipped"]
              if any(line.startswith(f"{prefix}{pid}.live:") for pid in planted))
if ours != sorted(expected):
    bad.append(f"skipped lines {ours}, want {sorted(expected)}")
for line in bad:
    print("  " + line, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

# --- top --once (text) ---
timeout 60 "$GPUPERF" top --once > "$work/top.txt" 2> "$work/top.err"
rc=$?
[[ $rc -eq 0 ]] || fail "top --once exited $rc: $(head -3 "$work/top.err")"
grep -qE "^ +$app_pid +- +0 .*fake_cuda_app live" "$work/top.txt" || fail "top --once lacks nobody's process row: $(cat "$work/top.txt")"
for pid in "${others[@]}" "$root_pid"; do
  grep -qE "^ +$pid " "$work/top.txt" && fail "top --once shows planted pid $pid"
done
for line in "${expected[@]}"; do
  [[ $(grep -cxF " skipped $line" "$work/top.txt") -eq 1 ]] || fail "top --once lacks ' skipped $line'"
done
ours=$(grep -cE "^ skipped $live/($(IFS='|'; echo "${others[*]}|$root_pid"))\.live:" "$work/top.txt")
[[ $ours -eq ${#expected[@]} ]] ||
  fail "top --once: $ours skipped lines for the pages planted in $live, want ${#expected[@]}"

# --- top --pid of a skipped page says why ---
timeout 60 "$GPUPERF" top --once --pid "$fifo" > /dev/null 2> "$work/pid.err"
rc=$?
[[ $rc -eq 1 ]] || fail "top --once --pid of a FIFO page exited $rc"
grep -qxF "gpuperf: error: no live page for pid $fifo (skipped ${expected[0]})" "$work/pid.err" ||
  fail "top --once --pid of a FIFO page said: $(cat "$work/pid.err")"

# --- a scrape of serve, twice: the log says each skip once ---
start_serve || finish
for scrape in 1 2; do
  curl -sf -m 30 "http://127.0.0.1:$port/metrics" > "$work/metrics.$scrape" || fail "scrape $scrape failed (exit $?)"
done
grep -qE "^gpuperf_gpu_operations_total\{pid=\"$app_pid\",.*kind=\"kernel\"\} $kernels$" "$work/metrics.2" ||
  fail "the scrape lacks nobody's $kernels kernels: $(grep gpuperf_gpu_operations_total "$work/metrics.2")"
for pid in "${others[@]}" "$root_pid"; do
  grep -q "pid=\"$pid\"" "$work/metrics.2" && fail "the scrape has series of planted pid $pid"
done
skipped=$(sed -n 's/^gpuperf_live_pages{state="skipped"} //p' "$work/metrics.2")
[[ ${skipped:-0} -ge ${#expected[@]} ]] || fail "the scrape counts ${skipped:-no} skipped pages, want at least ${#expected[@]}"
for line in "${expected[@]}"; do
  [[ $(grep -cxF "gpuperf serve: skipped $line" "$work/serve.err") -eq 1 ]] ||
    fail "serve's log does not say once: skipped $line ($(grep -c skipped "$work/serve.err") skip lines)"
done
kill -TERM "$serve_pid"
wait "$serve_pid" || fail "serve did not exit cleanly (exit $?)"

# --- nothing in nobody's directory was removed, replaced or added by root ---
[[ $(files) == "$before" ]] || fail "root changed what is in $live: $(files)"
[[ -z $(find "$live" -user root) ]] || fail "root-owned files in $live: $(find "$live" -user root)"

finish
