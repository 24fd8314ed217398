# The decode-like overhead budget of issue 12 (sourced by tests/gpu/run.sh): a GPT-2-shaped
# transformers model with random weights decodes greedily with its KV cache. The budget's
# numbers come from one process that alternates every 8 steps between no CUPTI at all
# (detached), CUPTI's kernel records alone, gpuperf, torch.profiler and
# torch.profiler(with_stack=True) (gpuperf_ab with GPUPERF_AB_LEVELS, paired per cycle of blocks:
# separate processes on the GPU machine differ by up to 2x, docs/performance.md); each round
# also runs a no-profiler and a plain gpuperf process, whose trace is read back: every kernel
# joined, the model's forward functions with file:line, no interpreter frames.
# GPUPERF_DECODE_ROUNDS rounds (default 3; bench/python/decode_overhead.py; about 100 s a round).
# PASS when, in the median round, gpuperf's added time is <= 25% of with_stack's and gpuperf is
# <= 1.10x of the kernel-records-only level (CUPTI's kernel records alone cost 1.07-1.10x of
# this step, so <= 1.10x of the unprofiled step is out of any CUPTI tracer's reach there; that
# ratio is printed too).
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
  GPUPERF_AB_LEVELS=detached,kind10,full,torch,torch_stack timeout 540 \
    python3 "$src/bench/python/decode_overhead.py" run --rounds "$rounds" --gpuperf "$gp" \
    --modes gpuperf,gpuperf_ab --out "$dir" --keep-trace "$trace" > "$dir/run.txt" 2> "$dir/run.err"
  local rc=$? problems=()
  sed 's/^/   /' "$dir/run.txt" | tee -a "$results"
  [[ $rc -eq 0 ]] || problems+=("harness exit $rc (see decode/run.err)")
  # The in-process rounds' medians: gpuperf x no CUPTI, x kernel records, % of with_stack's.
  local budget
  budget=$(python3 - "$dir/decode.json" <<'EOF'
import json, statistics, sys
rows = [r["ab"] for r in json.load(open(sys.argv[1]))["rows"] if r.get("ab")]
def median(key):
    values = [ab[key] for ab in rows if key in ab]
    return statistics.median(values) if values else float("nan")
ratio, floor, share = (median("full_paired_detached"), median("full_over_kernel_records_paired"),
                       median("full_pct_of_torch_stack"))
print(f"{ratio:.3f} {floor:.3f} {share:.1f} {int(floor <= 1.10)} {int(share <= 25.0)}")
EOF
)
  read -r ratio floor share floor_ok share_ok <<<"${budget:-nan nan nan 0 0}"
  [[ $floor_ok == 1 ]] || problems+=("gpuperf ${floor}x of the kernel-records level, over 1.10x")
  [[ $share_ok == 1 ]] || problems+=("gpuperf's added time ${share}% of with_stack's, over 25%")

  # The last gpuperf round's trace, as a user would read it.
  if [[ -d $trace ]]; then
    "$gp" flamegraph --folded -o "$dir/decode.folded" "$trace" 2> "$dir/flame.err"
    local joined; joined=$(joined_of "$dir/flame.err")
    all_joined "$joined" ||
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
    "${problems[*]:-gpuperf ${ratio}x of no CUPTI, ${floor}x of kernel records alone, ${share}% of what with_stack adds (in-process medians)}"
}
