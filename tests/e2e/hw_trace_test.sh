#!/usr/bin/env bash
# record --hw-trace asks CUPTI for kernel times from the GPU's Hardware Event System (Blackwell
# and newer; src/inject/cupti/activity.h). CUPTI takes that only between cuInit's end (the
# CU_INIT_FINISHED callback) and the first context. On a GPU without it: one notice, a counted warning, every kernel recorded the usual
# way. Where the fake CUPTI plays a GPU with it (FAKE_CUPTI_HW_TRACE=supported): asked before
# any context, counted, nothing lost. Without the flag it is never asked.
source "$(dirname "$0")/lib.sh"
use_fake_app
fake_field() { sed -n "s/^fake-cupti: .* $2=\([0-9]*\).*/\1/p" "$dir/$1.log"; }
kernels() { "$GPUPERF" dump "$dir/$1" 2>/dev/null | grep -c '^kernel '; }

"$GPUPERF" record -o "$dir/plain" --inject-lib "$lib" -- "$app" basic > "$dir/plain.log" 2>&1 ||
  fail "record exited $? ($(tail -3 "$dir/plain.log"))"
[[ $(fake_field plain hw_trace) == 0 ]] || fail "without --hw-trace CUPTI was asked for it: $(grep '^fake-cupti' "$dir/plain.log")"
want=$(kernels plain)
[[ $want -eq 5 ]] || fail "the basic scenario recorded $want kernels, want 5"

# A GPU without the Hardware Event System (the fake's default, as CUPTI on an H100).
"$GPUPERF" record -o "$dir/refused" --hw-trace --inject-lib "$lib" -- "$app" basic \
  > "$dir/refused.log" 2>&1 || fail "record --hw-trace exited $? ($(tail -3 "$dir/refused.log"))"
[[ $(grep -c -- "--hw-trace: no hardware kernel times here" "$dir/refused.log") -eq 1 ]] ||
  fail "want one notice that --hw-trace was refused: $(cat "$dir/refused.log")"
[[ $(stat_value "$dir/refused" hw_trace_unavailable) == 1 ]] || fail "the refusal was not counted"
[[ -z $(stat_value "$dir/refused" kernel_times_from_hardware) ]] || fail "refused, yet counted as taken"
[[ $(kernels refused) -eq $want ]] || fail "refused: $(kernels refused) kernels, want $want"
grep -q "lost      nothing" "$dir/refused.log" || fail "refused: $(grep -A1 -i lost "$dir/refused.log")"

# A GPU with it: asked once, after cuInit, before the first context.
FAKE_CUPTI_HW_TRACE=supported "$GPUPERF" record -o "$dir/taken" --hw-trace --inject-lib "$lib" -- \
  "$app" basic > "$dir/taken.log" 2>&1 || fail "record --hw-trace (supported) exited $? ($(tail -3 "$dir/taken.log"))"
[[ $(fake_field taken hw_trace) == 1 && $(fake_field taken hw_trace_late) == 0 &&
   $(fake_field taken hw_trace_early) == 0 ]] ||
  fail "want the Hardware Event System asked once, after cuInit and before any context: $(grep '^fake-cupti' "$dir/taken.log")"
[[ $(stat_value "$dir/taken" kernel_times_from_hardware) == 1 ]] || fail "taken, not counted"
! grep -q -- "--hw-trace:" "$dir/taken.log" || fail "a notice although it was taken: $(grep -- --hw-trace "$dir/taken.log")"
[[ $(kernels taken) -eq $want ]] || fail "taken: $(kernels taken) kernels, want $want"
[[ $(grep "launch stacks" "$dir/taken.log") == "$(grep "launch stacks" "$dir/plain.log")" ]] ||
  fail "taken: $(grep stacks "$dir/taken.log"), without the flag: $(grep stacks "$dir/plain.log")"

# Without a subscriber (no stacks, API records from CUPTI) no CU_INIT_FINISHED callback comes:
# asked at start, inside cuInit, where CUPTI refuses; the notice says why.
FAKE_CUPTI_HW_TRACE=supported GPUPERF_API_SOURCE=cupti "$GPUPERF" record -o "$dir/early" --no-stacks \
  --hw-trace --inject-lib "$lib" -- "$app" basic > "$dir/early.log" 2>&1 || fail "record (early) exited $?"
[[ $(fake_field early hw_trace_early) == 1 ]] || fail "early: not asked at start: $(grep '^fake-cupti' "$dir/early.log")"
grep -q -- "--hw-trace: no hardware kernel times here (CUPTI_ERROR_NOT_INITIALIZED; asked inside cuInit" "$dir/early.log" ||
  fail "early: the notice does not say why: $(grep -- --hw-trace "$dir/early.log")"
[[ $(kernels early) -eq $want ]] || fail "early: $(kernels early) kernels, want $want"

# The switch's spelling is checked like every other.
GPUPERF_HW_TRACE=yes "$GPUPERF" record -o "$dir/bad" --inject-lib "$lib" -- "$app" basic > "$dir/bad.log" 2>&1
grep -q "GPUPERF_HW_TRACE=yes is not on or off" "$dir/bad.log" || fail "a bad GPUPERF_HW_TRACE was not named: $(head -3 "$dir/bad.log")"
finish
