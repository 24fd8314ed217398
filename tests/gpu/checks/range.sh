# The capture range on real CUDA (sourced by tests/gpu/run.sh): launch_bound (5 s of
# launches, --delay 1 --duration 1) and PyTorch training (--delay 1 --duration 6, the loop
# going on after it); 0.5 s after the range
# gpuperf detaches from CUPTI (src/inject/cupti/detach.h) while the program goes on
# launching. Each program must finish normally, with the range's kernels all joined to
# their stacks (launch_bound: at least 1000), nothing lost, and the detach counted
# (cupti_detached_after_range).
range_check() {
  local rec=$work/rec/range problems=() seconds joined detached
  mkdir -p "$rec"
  # range_run NAME DELAY DURATION CMD...: record CMD with the range, fold, read the detach stat.
  range_run() {
    local name=$1 delay=$2 duration=$3; shift 3
    local start=$SECONDS
    GPUPERF_LOG=verbose timeout 300 "$gp" record -o "$rec/$name" --force --delay "$delay" \
      --duration "$duration" -- "$@" \
      > "$work/range_$name.out" 2> "$work/range_$name.err" || problems+=("$name: record exit $?")
    seconds=$((SECONDS - start))
    "$gp" flamegraph --folded -o "$work/range_$name.folded" "$rec/$name" 2> "$work/range_$name.flame.err"
    joined=$(joined_of "$work/range_$name.flame.err")
    detached=$(trace_stat "$rec/$name" cupti_detached_after_range)
    grep -q "lost      nothing" "$work/range_$name.err" ||
      problems+=("$name lost: $(grep -A1 -i lost "$work/range_$name.err" | tr '\n' ' ')")
    [[ $detached == 1 ]] || problems+=("$name: CUPTI not detached after the range ('$detached')")
    echo "   range $name: ${seconds} s run, ${joined:-no kernels joined}, detached=${detached:-no}; $(grep -h 'capture range\|CUPTI detached' "$work/range_$name.err" | tr '\n' ' ')" >> "$results"
  }
  # launch_bound: launches from its first moment to its last (about 5 s).
  range_run launch_bound 1 1 "$ex/launch_bound" --seconds 5
  all_joined "$joined" 1000 ||
    problems+=("launch_bound: not every kernel joined, or under 1000 in the range (${joined:-none})")
  local said="launch_bound: ${joined:-no kernels joined} in a 1 s range of a ${seconds} s run"
  # PyTorch training (~9 s of steps) that goes on after the range. Its first seconds after
  # CUDA starts are set-up (a 1 s range there held 0 to 2 kernels), so the range is long.
  if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    range_run pytorch 1 6 python3 "$src/examples/pytorch_transformer.py" --train --steps 1500 \
      --batch 2 --seq 64 --dim 128 --layers 2 --no-check
    all_joined "$joined" 1 ||
      problems+=("pytorch: not every kernel joined, or none (${joined:-none})")
    said+="; pytorch: ${joined:-no kernels joined}"
  fi
  note range "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" "${problems[*]:-$said, CUPTI detached after it}"
}
