# PyTorch backward kernels under their forward op's Python frames (src/inject/torch/
# autograd_link.h; sourced by tests/gpu/run.sh), on examples/pytorch_transformer.py --train:
#   small    2 layers of dim 64, 3 steps, recorded with the defaults: every kernel joined;
#            backward launches linked and no node unreadable; of the backward kernels' GPU
#            time (stacks with [autograd backward]), the share under a forward op's Python
#            frames, at least half; a backward kernel under the model's own forward() with
#            file:line. Kept as a CI fixture (< 400 KB, with PROVENANCE) in
#            $out/autograd/pytorch_train_fixture.tar.gz, for tests/data/h100/pytorch_train/.
#   off      the same with GPUPERF_AUTOGRAD_LINK=off: no backward kernel under Python frames.
#   cost     the default size, 20 steps: step_ms linked and off, 3 alternating pairs.
# Writes $out/autograd/: NAME.folded, small.backward.txt (the heaviest backward stacks).
autograd_check() {
  local dir=$out/autograd rec=$work/rec/autograd problems=() infos=()
  mkdir -p "$dir" "$rec"
  echo "== autograd: backward kernels under their forward op's Python frames" | tee -a "$results"
  if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    note autograd FAIL "no torch with CUDA"
    return
  fi
  local small=(python3 "$src/examples/pytorch_transformer.py" --train --steps 3 --warmup 1
               --batch 2 --seq 32 --dim 64 --heads 4 --layers 2 --vocab 256)
  # ag_record NAME [ENV=VALUE...] -- CMD...: record and fold.
  ag_record() {
    local name=$1; shift
    local env=()
    while [[ $1 != -- ]]; do env+=("$1"); shift; done
    shift
    env "${env[@]}" timeout 300 "$gp" record -o "$rec/$name" --force -- "$@" \
      > "$dir/$name.out" 2> "$dir/$name.err" || { problems+=("$name: record exit $?"); return 1; }
    "$gp" flamegraph --folded -o "$dir/$name.folded" "$rec/$name" 2> "$dir/$name.flame.err"
  }
  # ag_shares FOLDED: "BACKWARD_NS LINKED_NS" (tests/tools/backward_share.awk).
  ag_shares() { awk -f "$src/tests/tools/backward_share.awk" "$1"; }
  if ag_record small -- "${small[@]}"; then
    local joined shares
    joined=$(joined_of "$dir/small.flame.err")
    all_joined "$joined" ||
      problems+=("small: not every kernel joined (${joined:-none})")
    read -r -a shares <<<"$(ag_shares "$dir/small.folded")"
    local stats; stats=$("$gp" dump "$rec/small" 2>/dev/null | grep -E '# autograd_' |
      sed 's/.*value=\([0-9]*\).*# \(.*\)/\2=\1/' | sort -u | tr '\n' ' ')
    infos+=("small: backward kernels ${shares[0]} ns, under forward Python frames ${shares[1]} ns; $stats")
    [[ ${shares[0]} -gt 0 && $((shares[1] * 2)) -ge ${shares[0]} ]] ||
      problems+=("small: under half of the backward kernels' time has forward frames")
    [[ $stats == *autograd_backward_linked=* && $stats != *autograd_nodes_unreadable* ]] ||
      problems+=("small: stats $stats")
    grep -q 'forward (pytorch_transformer\.py:[0-9]*);.*\[autograd backward\]' "$dir/small.folded" ||
      problems+=("small: no backward kernel under the model's forward() with its line")
    awk '/\[autograd backward\]/ {print $NF "\t" $0}' "$dir/small.folded" | sort -t$'\t' -k1,1nr |
      head -12 | cut -f2- > "$dir/small.backward.txt"
    local saved
    if saved=$(save_fixture pytorch_train "$rec/small" "$dir/pytorch_train_fixture.tar.gz" "$dir/small.out" "${small[@]}"); then
      infos+=("$saved")
    else
      problems+=("small: $saved")
    fi
  fi
  if ag_record off GPUPERF_AUTOGRAD_LINK=off -- "${small[@]}"; then
    local off; read -r -a off <<<"$(ag_shares "$dir/off.folded")"
    [[ ${off[0]} -gt 0 && ${off[1]} -eq 0 ]] || problems+=("off: backward ${off[0]} ns, ${off[1]} ns under Python frames")
  fi
  # The cost: step_ms of the default training loop, linked and off, alternating.
  local pair way steps=()
  for pair in 1 2 3; do
    for way in on off; do
      GPUPERF_AUTOGRAD_LINK=$way timeout 300 "$gp" record -o "$rec/cost_$way" --force --quiet -- \
        python3 "$src/examples/pytorch_transformer.py" --train --steps 20 --no-check > "$dir/cost_$way.out" 2>&1
      steps+=("$way=$(grep -o 'step_ms=[0-9.]*' "$dir/cost_$way.out" | cut -d= -f2)")
    done
  done
  infos+=("training step_ms, alternating: ${steps[*]}")
  local line
  for line in "${infos[@]}"; do echo "   $line" >> "$results"; done
  note autograd "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-${infos[0]}}"
}
