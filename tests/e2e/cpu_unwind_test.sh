#!/usr/bin/env bash
# On-CPU user stacks unwound with .eh_frame (docs/cpu-profiling.md): a program spins at the
# bottom of a call chain through three shared libraries and libc, all without frame
# pointers (tests/cpu/unwind_chain_spin.cc: 3 s of its own CPU time, however busy the
# machine). Recorded with `record --cpu`, at least 90% of the CPU time in unwind_chain_spin
# must carry the whole chain, main -> Run -> Descend -> SortAndCallLeaf -> (qsort_r's
# frames) -> CompareInts -> CallLeaf -> unwind_chain_spin with no frame missing between
# them, and the table-unwound samples are counted; with GPUPERF_CPU_UNWIND=fp (frame
# pointers only, as before) under 10% do, which shows the copies are what makes the
# difference. The same chain on a 12 KiB stack with an unmapped page above it (a 16 KiB
# copy cannot be read whole there) must be whole too. (Samples taken before the recorder
# has read the maps that list the chain's libraries keep frame-pointer stacks: hence not
# 100%, though often it is.)
# Needs root and BPF: skipped without.
source "$(dirname "$0")/lib.sh"
app=$GPUPERF_BINARY_DIR/tests/unwind_chain_spin
lib=$GPUPERF_BINARY_DIR/src/inject/libgpuperf_inject.so
[[ -x $app && -f $lib ]] || { echo "SKIP: no unwind_chain_spin or injection library in this build"; exit 77; }
if [[ $(id -u) -ne 0 ]]; then echo "SKIP: the CPU profiler needs root here"; exit 77; fi
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

# record NAME [ENV...] [-- ARG]: records the program spinning for 3 s into $dir/NAME.
record() {
  local name=$1 env=() arg=(); shift
  while (( $# > 0 )) && [[ $1 != -- ]]; do env+=("$1"); shift; done
  [[ ${1:-} == -- ]] && arg=("${@:2}")
  env "${env[@]}" "$GPUPERF" record -o "$dir/$name" --inject-lib "$lib" --cpu --freq 499 -- \
    "$app" 3000 "${arg[@]}" > "$dir/$name.out" 2> "$dir/$name.err"
  local rc=$?
  if grep -qE "built without its eBPF CPU profiler|needs root|loading the BPF programs|attaching" \
       "$dir/$name.err"; then
    echo "SKIP: BPF is not available here: $(grep gpuperf: "$dir/$name.err" | head -1)"; exit 77
  fi
  [[ $rc -eq 0 ]] || fail "record ($name) exited $rc: $(tail -3 "$dir/$name.err")"
  "$GPUPERF" flamegraph --folded --weight cpu -o "$dir/$name.folded" "$dir/$name" 2>/dev/null ||
    fail "flamegraph ($name) failed"
}
# share FILE OUTER: the percentage (of the weight in unwind_chain_spin) whose line has the
# whole chain, from OUTER (a regex of the frames outward of RunChain) down.
chain='[^;]*RunChain;chain_nofp::Run;chain_nofp::Descend;chain_nofp::SortAndCallLeaf;(.*;)?[^;]*CompareInts;chain_nofp::CallLeaf;unwind_chain_spin;'
share() {
  awk -v re="(^|;)$2;$chain" '/(^|;)unwind_chain_spin;/ { all += $NF; if ($0 ~ re) whole += $NF }
    END { printf "%d %.0f\n", all ? 100 * whole / all : 0, all }' "$1"
}

record tables
record fp GPUPERF_CPU_UNWIND=fp
read -r tables_share tables_ns <<< "$(share "$dir/tables.folded" main)"
read -r fp_share fp_ns <<< "$(share "$dir/fp.folded" main)"
echo "whole chain: ${tables_share}% of ${tables_ns} ns with .eh_frame, ${fp_share}% of ${fp_ns} ns with frame pointers"
(( tables_ns > 500000000 )) || fail "too few samples in unwind_chain_spin (${tables_ns} ns): $(head -5 "$dir/tables.folded")"
(( fp_ns > 500000000 )) || fail "too few samples in unwind_chain_spin with fp (${fp_ns} ns)"
(( tables_share >= 90 )) ||
  fail "only ${tables_share}% of the samples have the whole chain: $(sort -t' ' -k2 -n -r "$dir/tables.folded" | head -3)"
(( fp_share < 10 )) || fail "frame pointers alone found the chain in ${fp_share}% (the test proves nothing)"

# On a 12 KiB stack with an unmapped page above it, the copy is what can be read of it.
record small_stack_tables -- small-stack
read -r small_share small_ns <<< "$(share "$dir/small_stack_tables.folded" 'gp_run_on_stack;[^;]*OnSmallStack')"
echo "whole chain on the small stack: ${small_share}% of ${small_ns} ns"
(( small_ns > 500000000 )) || fail "too few samples on the small stack (${small_ns} ns)"
(( small_share >= 90 )) || fail "only ${small_share}% of the samples on the small stack have the whole chain"

# The counts: table-unwound samples in the first, none in the second.
"$GPUPERF" dump "$dir/tables" > "$dir/tables.dump" 2>&1
grep -q "# cpu_stacks_unwound" "$dir/tables.dump" || fail "cpu_stacks_unwound not counted"
"$GPUPERF" dump "$dir/fp" > "$dir/fp.dump" 2>&1
grep -q "# cpu_stacks_unwound" "$dir/fp.dump" && fail "cpu_stacks_unwound counted with GPUPERF_CPU_UNWIND=fp"

finish
