# The .eh_frame table unwinder on PyTorch (docs/recording.md "How stacks are unwound"):
# the inference and training examples recorded with GPUPERF_UNWIND_VERIFY=1, so libunwind
# unwinds every stack again and each difference is counted. PASS when no stack differs and
# at least 90% of the launch stacks came from the tables (the rest fell back to libunwind:
# while the tables of libtorch & co. were still being built, or at a rule the tables do not
# hold). The stack memo's hits (launches repeated from the same place, docs/recording.md) are
# unwound again in this mode and compared too: PASS needs some checked and none different.
# Sourced by tests/gpu/run.sh (GPUPERF_GPU_CHECKS=unwind); writes under $out/unwind/:
# NAME.err (the recording's log, verbose: which tables were built and how long each took),
# NAME.stats (the unwinding counters), NAME.folded.

unwind_check() {
  local dir=$out/unwind
  mkdir -p "$dir"
  local name args verdict detail=""
  for name in inference train; do
    args=(--steps 300 --warmup 20)
    [[ $name == train ]] && args=(--train --steps 60 --warmup 5)
    local rec=$work/rec/unwind_$name
    GPUPERF_UNWIND_VERIFY=1 GPUPERF_LOG=verbose timeout 600 "$gp" record -o "$rec" --force -- \
      python3 "$src/examples/pytorch_transformer.py" "${args[@]}" \
      > "$dir/$name.out" 2> "$dir/$name.err"
    local rc=$?
    if [[ $rc -ne 0 ]]; then
      note "unwind" FAIL "$name: record exited $rc ($(tail -1 "$dir/$name.err"))"
      continue
    fi
    "$gp" dump "$rec" 2>/dev/null | grep -E '^stat ' | sed 's/^stat [^ ]* //' |
      grep -E '(stacks_unwound|table_|unwind_|fp_stacks_|stack_memo_)' | sort -u > "$dir/$name.stats"
    unwind_stat() { grep "# $1\$" "$dir/$name.stats" | sed 's/.*value=\([0-9]*\).*/\1/' | sort -n | tail -1; }
    local unwound table no_table rule verified differ
    unwound=$(unwind_stat stacks_unwound); table=$(unwind_stat table_stacks)
    no_table=$(unwind_stat table_fallback_no_table); rule=$(unwind_stat table_fallback_rule)
    verified=$(unwind_stat unwind_verified); differ=$(unwind_stat unwind_disagreements)
    local memo_checked memo_differ
    memo_checked=$(unwind_stat stack_memo_checked); memo_differ=$(unwind_stat stack_memo_disagreements)
    "$gp" flamegraph --folded -o "$dir/$name.folded" "$rec" > /dev/null 2>&1
    local share=$(( ${unwound:-0} > 0 ? 1000 * ${table:-0} / ${unwound:-0} : 0 ))
    local line="$name: ${table:-0}/${unwound:-0} stacks from tables ($((share / 10)).$((share % 10))%),"
    line+=" fallbacks ${no_table:-0} no table + ${rule:-0} rule, ${verified:-0} checked, ${differ:-0} differ;"
    line+=" memo hits ${memo_checked:-0} checked, ${memo_differ:-0} differ"
    echo "   unwind $line" | tee -a "$results"
    grep -h 'unwind check:' "$dir/$name.err" | head -3 | sed 's/^/     /' | tee -a "$results"
    verdict=PASS
    [[ ${differ:-0} -eq 0 && $share -ge 900 && ${verified:-0} -gt 0 ]] || verdict=FAIL
    [[ ${memo_differ:-0} -eq 0 && ${memo_checked:-0} -gt 0 ]] || verdict=FAIL
    note "unwind" "$verdict" "$line"
  done
}
