# GPU check `attach_ranks` (sourced by tests/gpu/run.sh; needs 2 GPUs; docs/attach.md): a
# 2-rank torchrun DDP job (examples/pytorch_ddp.py) started without gpuperf, attached with
# `gpuperf attach --all --duration 5s`: every process of the job with libcuda mapped is
# attached (the two ranks, and torchrun's agent where importing torch mapped it), one trace per
# rank with its rank, its kernels (NCCL's all-reduce among them) all joined to launch stacks
# with the training step's Python frames; the job goes on until it is stopped. Without 2 GPUs: SKIP. About 60 s of GPU time. Writes
# $out/attach_ranks/.
attach_ranks_check() {
  local dir=$out/attach_ranks problems=()
  mkdir -p "$dir"
  local gpus; gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  if [[ $gpus -lt 2 ]]; then
    note attach_ranks SKIP "needs 2 GPUs, this machine has $gpus"
    return
  fi
  echo "== attach_ranks: torchrun --nproc-per-node 2 pytorch_ddp.py, attach --all for 5 s" | tee -a "$results"
  setsid torchrun --standalone --nproc-per-node 2 "$src/examples/pytorch_ddp.py" --steps 1000000 \
    > "$dir/ddp.out" 2> "$dir/ddp.err" &
  local job=$!
  # Until both ranks run CUDA: the job's two processes with a LOCAL_RANK and libcuda mapped.
  local ranks=() waited
  for ((waited = 0; waited < 1200; waited++)); do
    # The agent starts its workers in sessions of their own: found by their command line.
    mapfile -t ranks < <(for p in $(pgrep -f pytorch_ddp.py); do
      tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -q '^LOCAL_RANK=' &&
        grep -q 'libcuda\.so' "/proc/$p/maps" 2>/dev/null && echo "$p"; done)
    [[ ${#ranks[@]} -ge 2 ]] && break
    sleep 0.1
  done
  sleep 5  # past the job's start-up: the ranks train
  local rec=$work/rec/attach_ranks
  "$gp" attach --all --duration 5s -v -o "$rec" --force > "$dir/attach.log" 2>&1
  local rc=$?
  sed 's/^/   /' "$dir/attach.log" | tee -a "$results"
  [[ $rc -eq 0 ]] || problems+=("attach --all exit $rc")
  [[ ${#ranks[@]} -eq 2 ]] || problems+=("${#ranks[@]} rank processes of the job have libcuda, want 2")
  # --all takes every process of this user with libcuda mapped: the two ranks, and torchrun's
  # agent where importing torch mapped it (it did on the H200 machine; it starts no CUDA work).
  local pid cuda_processes=0
  for pid in $(pgrep -f pytorch_ddp.py); do
    grep -q 'libcuda\.so' "/proc/$pid/maps" 2>/dev/null && cuda_processes=$((cuda_processes + 1))
  done
  local attached; attached=$(grep -c '^gpuperf: attached to process' "$dir/attach.log")
  [[ $attached -eq $cuda_processes ]] ||
    problems+=("attached to $attached processes, want the job's $cuda_processes with libcuda")
  for pid in "${ranks[@]}"; do
    grep -q "^gpuperf: attached to process $pid " "$dir/attach.log" || problems+=("rank process $pid not attached")
  done
  local trace joined said=()
  for pid in "${ranks[@]}"; do
    trace=$(ls "$rec"/*."$pid".gpt 2>/dev/null | head -1)
    [[ -n $trace ]] || { problems+=("no trace of rank process $pid"); continue; }
    local rank; rank=$("$gp" dump "$trace" 2>/dev/null | sed -n 's/^rank .* rank=\([0-9-]*\) .*/\1/p' | head -1)
    [[ $rank == 0 || $rank == 1 ]] || problems+=("process $pid: rank '$rank'")
    "$gp" flamegraph --folded -o "$dir/rank$rank.folded" "$trace" 2> "$work/attach_ranks_flame.err"
    joined=$(joined_of "$work/attach_ranks_flame.err")
    all_joined "$joined" 50 || problems+=("rank $rank: not every kernel joined (${joined:-none})")
    grep -q 'pytorch_ddp\.py:[0-9]*' "$dir/rank$rank.folded" || problems+=("rank $rank: no Python frames")
    grep -qi 'nccl' "$dir/rank$rank.folded" || problems+=("rank $rank: no NCCL kernel in the window")
    said+=("rank $rank ${joined:-?}")
  done
  "$gp" report "$rec" > "$dir/report.txt" 2>&1 || problems+=("report failed")
  kill -TERM -- -"$job" 2>/dev/null
  wait "$job"
  note attach_ranks "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" "${problems[*]:-${said[*]}}"
}
