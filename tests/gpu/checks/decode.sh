# The decode-like overhead budget of issue 12 (sourced by tests/gpu/run.sh): a GPT-2-shaped
# transformers model with random weights decodes greedily with its KV cache, in separate
# processes round-robin over no profiler / gpuperf (Python stacks) / torch.profiler /
# torch.profiler(with_stack=True), plus one process that switches its own recording between
# levels every 8 steps (gpuperf_ab: the in-process ratios, docs/performance.md), for
# GPUPERF_DECODE_ROUNDS rounds (default 3;
# bench/python/decode_overhead.py; about 50 s a round). PASS when gpuperf's median step time is <= 1.10x the no-profiler one and its
# added time <= 25% of with_stack's. gpuperf's last trace is then read back: every kernel
# joined, the model's forward functions with file:line, no interpreter frames.
# Writes $out/decode/: decode.txt (the table), decode.json, rows.jsonl, top_stacks.txt,
# forward_frames.txt, stats.txt.
decode_check() {
  local dir=$out/decode trace=$work/rec/decode
  mkdir -p "$dir"
  local rounds=${GPUPERF_DECODE_ROUNDS:-3}
  echo "== decode: decode-like overhead, $rounds rounds" | tee -a "$results"
  if ! python3 -c 'import torch, transformers, sys; sys.exit(0 if torch.cuda.is_available() else 1)' \
      2>/dev/null; then
    note decode FAIL "no torch with CUDA, or no transformers"
    return
  fi
  timeout 480 python3 "$src/bench/python/decode_overhead.py" run --rounds "$rounds" --gpuperf "$gp" \
    --modes gpuperf,torch,torch_stack,gpuperf_ab \
    --out "$dir" --keep-trace "$trace" > "$dir/run.txt" 2> "$dir/run.err"
  local rc=$? problems=()
  sed 's/^/   /' "$dir/run.txt" | tee -a "$results"
  [[ $rc -eq 0 ]] || problems+=("harness exit $rc (see decode/run.err)")
  grep -q '^budget: gpuperf <= 1.10x: yes' "$dir/run.txt" || problems+=("over 1.10x")
  grep -q 'of with_stack.s added time: yes' "$dir/run.txt" || problems+=("over 25% of with_stack")

  # The last gpuperf round's trace, as a user would read it.
  if [[ -d $trace ]]; then
    "$gp" flamegraph --folded -o "$dir/decode.folded" "$trace" 2> "$dir/flame.err"
    local joined; joined=$(grep -o '[0-9,]*/[0-9,]* kernels joined' "$dir/flame.err" | tr -d ,)
    [[ -n $joined && ${joined%%/*} == $(cut -d/ -f2 <<<"${joined%% *}") ]] ||
      problems+=("not every kernel joined (${joined:-none})")
    grep -o '[A-Za-z0-9_.]*forward ([A-Za-z0-9_]*\.py:[0-9]*)' "$dir/decode.folded" | sort | uniq -c |
      sort -rn > "$dir/forward_frames.txt"
    [[ $(grep -c 'GPT2[A-Za-z]*\.forward (modeling_gpt2\.py:' "$dir/forward_frames.txt") -ge 3 ]] ||
      problems+=("fewer than 3 GPT2 forward frames with file:line")
    grep -q '_PyEval_EvalFrameDefault\|python3\.[0-9]*+0x\|libpython[^;]*+0x' "$dir/decode.folded" &&
      problems+=("interpreter frames in the default flame graph")
    # Heaviest stacks first (the weight is the last field; frames may hold spaces).
    awk '{print $NF "\t" $0}' "$dir/decode.folded" | sort -t$'\t' -k1,1nr | head -12 | cut -f2- \
      > "$dir/top_stacks.txt"
    "$gp" dump "$trace" 2>/dev/null | grep -E '# (python_|unique_stacks|stacks_unwound|unwind_ns|callback_ns|fp_stacks|table_stacks|stack_memo_)' |
      sed 's/^stat [^ ]* //' | sort -u > "$dir/stats.txt"
    echo "   forward frames: $(head -4 "$dir/forward_frames.txt" | tr -s ' ' | tr '\n' '|')" | tee -a "$results"
  else
    problems+=("no gpuperf trace kept")
  fi
  note decode "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-$(grep -o 'gpuperf <= 1.10x: yes ([^)]*)' "$dir/run.txt"); $(sed -n "s/^gpuperf's added time as % of with_stack's: /share of with_stack: /p" "$dir/run.txt")%}"
}
