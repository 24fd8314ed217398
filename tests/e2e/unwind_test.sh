#!/usr/bin/env bash
# Launch stacks through code built without frame pointers, in the real injection library
# under the fake libcupti (tests/fakes, fake_cuda_app_nofp's `chain` scenario): the .eh_frame
# tables take them once built, libunwind checks every one (GPUPERF_UNWIND_VERIFY=1) and
# agrees, frames the tables cannot follow fall back (counted), and the flame graphs of
# GPUPERF_UNWIND=table, auto and libunwind are identical.
source "$(dirname "$0")/lib.sh"
use_fake_app nofp

# run NAME ARGS...: records the chain scenario; leaves the app's line in $said.
run() {
  local name=$1; shift
  rm -rf "$dir/$name"
  "$GPUPERF" record -o "$dir/$name" --inject-lib "$lib" -- "$app" chain "$@" \
    > "$dir/$name.out" 2> "$dir/$name.err" || fail "$name: record exited $? ($(tail -2 "$dir/$name.err"))"
  said=$(grep -h '^fake-app:' "$dir/$name.out" | head -1)
}
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<< "$2"; }
folded() { "$GPUPERF" flamegraph --folded --weight count -o "$dir/$1.folded" "$dir/$1" 2>/dev/null || fail "$1: flamegraph"; }

# Tables only, every stack checked by libunwind.
GPUPERF_UNWIND=table GPUPERF_UNWIND_VERIFY=1 run table 4 300 500
launches=$(field launches "$said")
[[ $launches -eq 1201 ]] || fail "table: the app launched '$launches' kernels, want 1201"
tables=$(stat_value "$dir/table" table_stacks)
verified=$(stat_value "$dir/table" unwind_verified)
[[ ${tables:-0} -gt 600 ]] || fail "table: only '${tables:-0}' of 1201 stacks from the tables"
[[ ${verified:-0} -eq ${tables:-0} ]] || fail "table: ${verified:-0} stacks checked, ${tables:-0} from the tables"
[[ -z $(stat_value "$dir/table" unwind_disagreements) ]] || fail "table: $(stat_value "$dir/table" unwind_disagreements) stacks differ from libunwind's"
# A quarter of the chains keep a frame's CFA in R12: those stacks fall back, and say why. The
# pause after the first launch lets the tables be built; launches before that fall back too.
rule=$(stat_value "$dir/table" table_fallback_rule)
[[ ${rule:-0} -ge 250 && ${rule:-0} -le 300 ]] || fail "table: ${rule:-0} fallbacks for a rule, want about 300"
no_table=$(stat_value "$dir/table" table_fallback_no_table)
# One stack per launch, and one per host synchronization (linked for the sync report).
waits=$("$GPUPERF" dump "$dir/table" 2>/dev/null | grep '^launch_link ' | grep -c 'Synchronize"')
[[ $((${tables:-0} + ${rule:-0} + ${no_table:-0})) -eq $((1201 + waits)) ]] \
  || fail "table: ${tables:-0} table stacks + ${rule:-0} + ${no_table:-0} fallbacks != 1201 launches + $waits synchronizations"
grep -q 'unwind check: a table walk first fell back to libunwind at libgp_unwind_chain_c.so+0x[0-9a-f]* (unexpressible rule)' \
  "$dir/table.err" || fail "table: no line naming the frame that fell back ($(grep gpuperf "$dir/table.err" | head -3))"
"$GPUPERF" report "$dir/table" 2>/dev/null | grep -q 'from .eh_frame tables' \
  || fail "table: the report's overhead section does not say how stacks were unwound"

# The same stacks as libunwind alone, and as the default (frame pointers refused here).
GPUPERF_UNWIND=libunwind run libunwind 4 300
[[ -z $(stat_value "$dir/libunwind" table_stacks) ]] || fail "GPUPERF_UNWIND=libunwind walked tables"
run auto 4 300 500
[[ $(stat_value "$dir/auto" table_stacks) -gt 600 ]] || fail "auto: '$(stat_value "$dir/auto" table_stacks)' stacks from the tables"
for name in table libunwind auto; do folded "$name"; done
grep -q 'Realigned;' "$dir/libunwind.folded" && grep -q 'ViaOtherRegister;' "$dir/libunwind.folded" \
  || fail "libunwind: the chain's frames are not on the stacks"
for name in table auto; do
  diff <(sort "$dir/$name.folded") <(sort "$dir/libunwind.folded") > /dev/null \
    || fail "$name and libunwind stacks differ: $(diff <(sort "$dir/$name.folded") <(sort "$dir/libunwind.folded") | head -4)"
done

# A bad value: one line naming it, the default kept, the recording whole.
GPUPERF_UNWIND=tables run bad 1 20
grep -q 'GPUPERF_UNWIND=tables is not auto, table, fp or libunwind' "$dir/bad.err" \
  || fail "bad GPUPERF_UNWIND: no line naming it ($(grep gpuperf "$dir/bad.err" | head -2))"
[[ $("$GPUPERF" dump "$dir/bad" 2>/dev/null | grep -c '^kernel ') -eq 21 ]] || fail "bad GPUPERF_UNWIND: kernels lost"
finish
