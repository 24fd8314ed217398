#!/usr/bin/env bash
# Root's `gpuperf dump-now PID` on another user's process does the file work as that user
# (docs/flight-recorder.md, "What dump-now trusts"): the process's owner chooses its
# environment, and so the directory and every name in it, and must not be able to make root
# create, read or append to anything they could not. As root, against processes of nobody's
# whose GPUPERF_OUTPUT_DIR is a directory of nobody's holding:
#   - a symbolic link where the request file goes, to a path in a root-only directory: no
#     file is created there, one line says why, no dump is asked for;
#   - a symbolic link as the recorder's state file, to a root-only file: not read, one line;
#   - a state file that answers the request with a "dump" that is a link to root's own trace:
#     root's trace is not appended to (symbolization fails as nobody, with a warning);
# and nobody's real `record --flight`: root's dump-now still gets the dump, written and
# symbolized as nobody. Nothing root-owned is left in nobody's directory. Last, the messages
# for pid 1 as root (not recorded by gpuperf) and as nobody (another user's process).
source "$(dirname "$0")/lib.sh"
use_fake_app
[[ $(id -u) -eq 0 ]] || { echo "skip: needs root (root's dump-now on another user's process)"; exit 77; }
command -v setpriv >/dev/null || { echo "skip: no setpriv"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "skip: no user nobody"; exit 77; }
nobody=(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --inh-caps=-all)
as_nobody() { "${nobody[@]}" "$@"; }
as_nobody test -x "$GPUPERF" -a -r "$lib" ||
  { echo "skip: nobody cannot run $GPUPERF (a build directory only root can read)"; exit 77; }
pids=()
trap 'for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$dir"' EXIT
chmod 755 "$dir"
user=$dir/nobody
mkdir "$user" && chown nobody "$user"
mkdir -m 700 "$dir/root-only"
wait_for() { for _ in $(seq 300); do "$@" && return 0; sleep 0.1; done; return 1; }

# as_flight_process SCRIPT ARGS...: a process of nobody's that says it is recorded with
# --flight into $user and runs SCRIPT (bash; $0 is $user, then ARGS); its pid in $target.
as_flight_process() {
  local script=$1; shift
  "${nobody[@]}" env GPUPERF_FLIGHT_MS=600000 GPUPERF_FLIGHT_SIGNAL=0 GPUPERF_OUTPUT_DIR="$user" \
    bash -c "$script" "$user" "$@" &
  target=$!
  pids+=("$target")
}
root_owned() { find "$user" -user root; }

# --- a link where the request goes ---
as_flight_process 'printf "dumps=0\nlast=\n" > "$0/.gpuperf-flight-$$"; exec sleep infinity'
wait_for test -s "$user/.gpuperf-flight-$target" || fail "no state file for $target"
as_nobody ln -s "$dir/root-only/made" "$user/.gpuperf-flight-$target.request"
timeout 60 "$GPUPERF" dump-now --timeout 3 "$target" > "$dir/link.out" 2> "$dir/link.err"
rc=$?
[[ $rc -ne 0 ]] || fail "dump-now through a request link exited 0"
[[ ! -e $dir/root-only/made ]] || fail "dump-now created $(ls -l "$dir/root-only/made") through nobody's link"
grep -qF "$user/.gpuperf-flight-$target.request is a symbolic link, not a dump request: left alone" "$dir/link.err" ||
  fail "dump-now through a request link said: $(cat "$dir/link.err")"
[[ -L $user/.gpuperf-flight-$target.request ]] || fail "dump-now removed nobody's link"

# --- a link as the state file ---
printf 'dumps=0\nlast=\n' > "$dir/root-only/state"
as_flight_process 'ln -s "$1" "$0/.gpuperf-flight-$$"; exec sleep infinity' "$dir/root-only/state"
wait_for test -L "$user/.gpuperf-flight-$target" || fail "no state link for $target"
timeout 60 "$GPUPERF" dump-now --timeout 3 "$target" > "$dir/state.out" 2> "$dir/state.err"
rc=$?
[[ $rc -ne 0 ]] || fail "dump-now with a state link exited 0"
grep -qF "$user/.gpuperf-flight-$target is a symbolic link: not the flight recorder's state" "$dir/state.err" ||
  fail "dump-now with a state link said: $(cat "$dir/state.err")"
[[ ! -e $user/.gpuperf-flight-$target.request ]] || fail "dump-now asked for a dump after a state link"

# --- a "dump" that is a link to root's own trace ---
"$GPUPERF" record --no-symbolize -o "$dir/root-rec" --inject-lib "$lib" -- "$app" basic > /dev/null 2>&1 ||
  fail "recording root's trace failed"
cp "$dir"/root-rec/fake_cuda_app.*.gpt "$dir/root-only/root.gpt"
cp "$dir/root-only/root.gpt" "$dir/root.gpt.before"
# It waits for the request (a bounded poll), then says the dump is $user/evil.gpt.
as_flight_process '
  state=$0/.gpuperf-flight-$$
  printf "dumps=0\nlast=\n" > "$state.part" && mv "$state.part" "$state"
  for _ in $(seq 3000); do [[ -e $state.request ]] && break; sleep 0.01; done
  ln -s "$1" "$0/evil.gpt"
  printf "dumps=1\nlast=%s\n" "$0/evil.gpt" > "$state.part" && mv "$state.part" "$state"
  exec sleep infinity' "$dir/root-only/root.gpt"
wait_for test -s "$user/.gpuperf-flight-$target" || fail "no state file for $target"
timeout 60 "$GPUPERF" dump-now --timeout 30 "$target" > "$dir/evil.out" 2> "$dir/evil.err"
[[ $(cat "$dir/evil.out") == "$user/evil.gpt" ]] || fail "dump-now printed '$(cat "$dir/evil.out")' ($(cat "$dir/evil.err"))"
cmp -s "$dir/root-only/root.gpt" "$dir/root.gpt.before" || fail "dump-now appended to root's trace through nobody's link"
grep -q "symbolization failed" "$dir/evil.err" || fail "no warning that symbolization failed: $(cat "$dir/evil.err")"

# --- nobody's real flight recording: root's dump-now gets it, as nobody ---
mkdir -p "$dir/go"
"${nobody[@]}" env FAKE_APP_GO_DIR="$dir/go" "$GPUPERF" record -o "$user/flight" --flight 600s --inject-lib "$lib" -- \
  "$app" flight 50 20 > "$dir/flight.out" 2> "$dir/flight.err" &
record=$!
pids+=("$record")
wait_for grep -qs "phase 1 done" "$dir/flight.out" || fail "nobody's flight recording never ran: $(cat "$dir/flight.err")"
pid=$(sed -n 's/.*phase 1 done.* pid=\([0-9]*\).*/\1/p' "$dir/flight.out")
dumped=$(timeout 120 "$GPUPERF" dump-now "$pid" 2> "$dir/real.err")
rc=$?
want=$user/flight/fake_cuda_app.$pid.flight-1.gpt
[[ $rc -eq 0 && $dumped == "$want" ]] || fail "root's dump-now of nobody's recording printed '$dumped' (exit $rc: $(cat "$dir/real.err")), want $want"
[[ $(stat -c %U "$want" 2>/dev/null) == nobody ]] || fail "the dump is not nobody's: $(ls -l "$want")"
phase1=$("$GPUPERF" dump "$want" 2>/dev/null | grep -c '^kernel .*name="_Z6phase1v"')
[[ $phase1 -eq 50 ]] || fail "root's dump-now: $phase1 kernels of phase 1 in the dump, want 50"
touch "$dir/go/go-1" "$dir/go/go-2"
wait "$record" || fail "nobody's flight recording exited $?: $(tail -3 "$dir/flight.err")"

[[ -z $(root_owned) ]] || fail "root-owned files in nobody's directory: $(root_owned)"

# --- whose process it is, in the message ---
if cat /proc/1/environ > /dev/null 2>&1; then
  expect_exit 2 "$GPUPERF" dump-now 1
  expect_stderr_contains "process 1 is not recorded by gpuperf" "$GPUPERF" dump-now 1
else  # a pid 1 that keeps even root out (a sandbox's init): says so
  expect_exit 1 "$GPUPERF" dump-now 1
  expect_stderr_contains "cannot read /proc/1/environ: Permission denied (process 1 lets no one read it, so dump-now cannot find its recording)" "$GPUPERF" dump-now 1
fi
expect_exit 1 as_nobody "$GPUPERF" dump-now 1
expect_stderr_contains "process 1 belongs to uid 0, not to you (uid $(id -u nobody))" as_nobody "$GPUPERF" dump-now 1
finish
