#!/usr/bin/env bash
# The capture range (record --delay/--duration, docs/recording.md): launches inside the range
# are recorded with their stacks, launches after it are not; once the range is over and its
# work had time to finish (0.5 s), gpuperf detaches CUPTI altogether (cupti/detach.h:
# attached with everything off it would keep costing the program), counts it, and the
# program exits with the trace finished and nothing lost. A program that ends before then
# keeps CUPTI to the end. A --delay range records only what comes after it. Driven with the
# fake CUDA app (tests/fakes/fake_app.cc, scenario window).
source "$(dirname "$0")/lib.sh"
use_fake_app
count() { "$GPUPERF" dump "$1" 2>/dev/null | grep '^kernel ' | grep -c "$2"; }

# --duration 0.2, a 2 s pause: the range ends at 0.2 s, CUPTI is detached at 0.7 s.
"$GPUPERF" record -o "$dir/range" --duration 0.2 --inject-lib "$lib" -- "$app" window 50 2000 \
  > "$dir/range.log" 2>&1 || fail "record exited $? ($(tail -3 "$dir/range.log"))"
[[ $(count "$dir/range" _Z6insidev) -eq 50 ]] || fail "kernels inside the range: $(count "$dir/range" _Z6insidev), want 50"
[[ $(count "$dir/range" _Z7outsidev) -eq 0 ]] || fail "kernels after the range were recorded: $(count "$dir/range" _Z7outsidev)"
[[ $(stat_value "$dir/range" cupti_detached_after_range) == 1 ]] ||
  fail "CUPTI was not detached after the range (cupti_detached_after_range: '$(stat_value "$dir/range" cupti_detached_after_range)')"
grep -q "launch stacks 50 of 50" "$dir/range.log" || fail "the range's launches lack stacks: $(grep -E 'stacks|lost' "$dir/range.log")"
grep -q "lost      nothing" "$dir/range.log" || fail "the recording lost something: $(grep -A2 lost "$dir/range.log")"
! grep -q "no kernel in the capture range" "$dir/range.log" || fail "a range with kernels was called empty"

# The range's edges are kept to the millisecond, not rounded up to the writer's period
# (500 ms): launches 0.4 s in are after a 0.2 s range. The program ends before the detach:
# CUPTI stays attached to the end, as before.
"$GPUPERF" record -o "$dir/short" --duration 0.2 --inject-lib "$lib" -- "$app" window 50 400 \
  > "$dir/short.log" 2>&1 || fail "record (short) exited $?"
[[ $(count "$dir/short" _Z6insidev) -eq 50 && $(count "$dir/short" _Z7outsidev) -eq 0 ]] ||
  fail "short: $(count "$dir/short" _Z6insidev) inside, $(count "$dir/short" _Z7outsidev) after, want 50 and 0"
[[ -z $(stat_value "$dir/short" cupti_detached_after_range) ]] || fail "short: CUPTI detached before the grace period"

# --delay 0.3: only the launches after the pause (0.45 s in: before the writer's first
# period).
"$GPUPERF" record -o "$dir/delay" --delay 0.3 --inject-lib "$lib" -- "$app" window 50 450 \
  > "$dir/delay.log" 2>&1 || fail "record (delay) exited $?"
[[ $(count "$dir/delay" _Z6insidev) -eq 0 && $(count "$dir/delay" _Z7outsidev) -eq 50 ]] ||
  fail "delay: $(count "$dir/delay" _Z6insidev) before, $(count "$dir/delay" _Z7outsidev) after, want 0 and 50"

# A range that holds no kernel says why, in one line, instead of leaving zeros to puzzle over:
# the program ended before it began, or launched nothing in it.
"$GPUPERF" record -o "$dir/late" --delay 3 --inject-lib "$lib" -- "$app" window 20 0 \
  > "$dir/late.log" 2>&1 || fail "record (late) exited $?"
grep -q "kernels   0 " "$dir/late.log" || fail "late: kernels recorded before the range: $(grep kernels "$dir/late.log")"
grep -q "note      no kernel in the capture range (--delay 3 s): the program ended .* before the range began" \
  "$dir/late.log" || fail "late: no note that the program ended first: $(cat "$dir/late.log")"
"$GPUPERF" record -o "$dir/gap" --delay 0.2 --duration 0.1 --inject-lib "$lib" -- "$app" window 20 700 \
  > "$dir/gap.log" 2>&1 || fail "record (gap) exited $?"
grep -q "note      no kernel in the capture range (--delay 0.2 s, --duration 0.1 s): none was launched in it" \
  "$dir/gap.log" || fail "gap: no note about an empty range: $(cat "$dir/gap.log")"
finish
