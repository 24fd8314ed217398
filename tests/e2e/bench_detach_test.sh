#!/usr/bin/env bash
# The benchmark hook's detached level (gpuperf_bench_toggle(-2), docs/performance.md): CUPTI is
# finalized, so the launches in between are not recorded and another client can take CUPTI's
# subscriber slot; attaching again fails (-1) while that client holds the slot; level -3
# finalizes CUPTI with that client's subscriber, and after it gpuperf attaches and records the
# launches with their stacks as before. Driven with the
# fake CUDA app (tests/fakes/fake_app.cc, scenario bench_detach).
source "$(dirname "$0")/lib.sh"
use_fake_app
# A build without the benchmark hook (GPUPERF_BENCH_HOOKS=OFF, as a release may be) exports none.
nm -D --defined-only "$lib" | grep -q ' gpuperf_bench_toggle$' ||
  { echo "skip: $lib built without the benchmark hook (GPUPERF_BENCH_HOOKS=OFF)"; exit 77; }

"$GPUPERF" record -o "$dir/run" --force --inject-lib "$lib" -- "$app" bench_detach 50 \
  > "$dir/run.log" 2>&1 || fail "record exited $? ($(tail -3 "$dir/run.log"))"
said() { sed -n "s/^fake-app: $1=\(.*\)/\1/p" "$dir/run.log"; }
[[ $(said unknown_level) == -1 ]] || fail "an unknown level returned '$(said unknown_level)', want -1"
[[ $(said detach) == 0 ]] || fail "detach returned '$(said detach)'"
[[ $(said other_client) == CUPTI_SUCCESS ]] \
  || fail "the other client did not get CUPTI while gpuperf was detached: '$(said other_client)'"
[[ $(said attach_while_held) == -1 ]] \
  || fail "attaching while the other client holds CUPTI returned '$(said attach_while_held)', want -1"
[[ $(said finalize) == 0 ]] || fail "finalize returned '$(said finalize)'"
[[ $(said attach) == 0 ]] || fail "attaching again returned '$(said attach)'"

"$GPUPERF" dump "$dir/run" > "$dir/dump.txt" 2>&1 || fail "dump failed: $(tail -3 "$dir/dump.txt")"
count() { grep '^kernel ' "$dir/dump.txt" | grep -c "$1"; }
[[ $(count _Z8attachedv) -eq 50 ]] || fail "kernels before the detach: $(count _Z8attachedv), want 50"
[[ $(count _Z8detachedv) -eq 0 ]] || fail "kernels while detached were recorded: $(count _Z8detachedv)"
[[ $(count _Z10reattachedv) -eq 50 ]] \
  || fail "kernels after attaching again: $(count _Z10reattachedv), want 50"
# The diagnostic levels: -4 records nothing; -5 holds the subscriber slot (another client is
# refused), and the recording attaches again after it.
[[ $(said no_callbacks) == 0 && $(said subscriber_only) == 0 && $(said attach_after_subscriber) == 0 ]] \
  || fail "levels -4, -5, 1 returned $(said no_callbacks) $(said subscriber_only) $(said attach_after_subscriber)"
[[ $(said other_beside_subscriber) == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ]] \
  || fail "level -5 did not hold the subscriber: '$(said other_beside_subscriber)'"
[[ $(count _Z6nocallv) -eq 0 ]] || fail "kernels under level -4 were recorded: $(count _Z6nocallv)"
[[ $(count _Z4lastv) -eq 50 ]] || fail "kernels after level -5: $(count _Z4lastv), want 50"
# -201: the recording without copy records, attached afresh, still records kernels; 1 after it.
[[ $(said without_copies) == 0 && $(said back) == 0 ]] ||
  fail "levels -201, 1 returned $(said without_copies) $(said back)"
[[ $(count _Z7withoutv) -eq 50 ]] || fail "kernels under level -201: $(count _Z7withoutv), want 50"

# 7: callbacks that return at once: kernels recorded, none linked. 8: no driver-API callbacks:
# runtime launches are linked still.
[[ $(said idle_callbacks) == 0 && $(said no_driver) == 0 ]] ||
  fail "levels 7, 8 returned $(said idle_callbacks) $(said no_driver)"
[[ $(count _Z4idlev) -eq 50 && $(count _Z8nodriverv) -eq 50 ]] ||
  fail "kernels under levels 7, 8: $(count _Z4idlev) $(count _Z8nodriverv), want 50 each"
# 9: without the autograd link (no libtorch here): recorded and linked as before.
[[ $(said no_autograd) == 0 && $(count _Z10noautogradv) -eq 50 ]] ||
  fail "level 9 returned $(said no_autograd), $(count _Z10noautogradv) kernels, want 0 and 50"

# Every other recorded kernel still joins its launch stack, before and after, and nothing is lost.
grep -q "launch stacks 300 of 300" "$dir/run.log" \
  || fail "not every launch seen (all but level 7s) joined its stack: $(grep -E 'stacks|lost' "$dir/run.log")"
grep -q "lost      nothing" "$dir/run.log" || fail "the recording lost something: $(grep lost "$dir/run.log")"
joined=$(grep '^launch_link ' "$dir/dump.txt" | grep -vc 'stack_id=0 ')
[[ $joined -eq 300 ]] || fail "$joined launch links with a stack, want 300"
finish
