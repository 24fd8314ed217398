#!/usr/bin/env bash
# The overhead harness: every workload under every profiler mode, in alternation
# (A B C A B C ...), medians and spreads over the rounds, then a soak case. Prints the table
# last; writes runs.jsonl (every run), overhead.json and overhead.txt (the table), and
# machine.json to the output directory.
#
# usage: bench/overhead/run.sh [--quick] [--dry-run] [--rounds N] [--out DIR]
#                              [--workloads LIST] [--modes LIST] [--soak-seconds S] [--no-soak]
#                              [--keep-traces]
#   --quick       200k launches, small workloads, 3 rounds, 10 s soak (about 4 minutes)
#   --dry-run     print the command matrix in run order; build and run nothing
#   LIST          comma-separated names (see below); default all
# env: GPUPERF (the gpuperf binary; default build/gpuperf), EXAMPLES_DIR (prebuilt examples;
#      built with examples/build.sh when unset), FLOOR_LIB (libcupti_floor.so; built when
#      unset), PYTHON (default python3), OUT (output directory when --out is not given),
#      TIMEOUT_S (per run), SOAK_ARGS (launch_bound options for the soak; default --threads 4)
#
# Modes: base (no profiler), floor (minimal kernel-only CUPTI tracer), gp_kernel (gpuperf
# record --activities kernel --no-stacks), gp_act (gpuperf record --no-stacks: all default
# activities), gp_all (gpuperf record: everything, stacks included), torch and torch_stack
# (torch.profiler with CPU+CUDA activities, without and with with_stack=True; PyTorch only).
# Workloads: launch_bound, mock_transformer, cublas, multi_stream, pytorch_infer,
# pytorch_train (full mode only unless named in --workloads).
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
PYTHON=${PYTHON:-python3}

quick=0
dry_run=0
rounds=""
out_dir=${OUT:-}
only_workloads=""
only_modes=""
soak_seconds=""
soak=1
keep=()
usage() { sed -n '6,16p' "$0" | sed 's/^# \{0,1\}//' >&2; exit "$1"; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --quick) quick=1 ;;
    --dry-run) dry_run=1 ;;
    --rounds) rounds=${2:?}; shift ;;
    --out) out_dir=${2:?}; shift ;;
    --workloads) only_workloads=${2:?}; shift ;;
    --modes) only_modes=${2:?}; shift ;;
    --soak-seconds) soak_seconds=${2:?}; shift ;;
    --no-soak) soak=0 ;;
    --keep-traces) keep=(--keep) ;;
    -h|--help) usage 0 ;;
    *) echo "run.sh: unknown option $1" >&2; usage 2 ;;
  esac
  shift
done

if [[ $quick -eq 1 ]]; then
  launches=200000 mock_steps=20 cublas_args=(--iterations 2 --repeat 100) ms_batches=50
  torch_steps=30 train_steps=10 default_rounds=3 default_soak=10 default_timeout=120
  default_workloads=launch_bound,mock_transformer,cublas,multi_stream,pytorch_infer
else
  launches=1000000 mock_steps=100 cublas_args=(--iterations 5 --repeat 200) ms_batches=200
  torch_steps=100 train_steps=30 default_rounds=5 default_soak=60 default_timeout=300
  default_workloads=launch_bound,mock_transformer,cublas,multi_stream,pytorch_infer,pytorch_train
fi
rounds=${rounds:-$default_rounds}
soak_seconds=${soak_seconds:-$default_soak}
TIMEOUT_S=${TIMEOUT_S:-$default_timeout}
workloads=${only_workloads:-$default_workloads}
read -r -a soak_args <<<"${SOAK_ARGS:---threads 4}"
if ! [[ $rounds =~ ^[1-9][0-9]*$ && $soak_seconds =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: --rounds and --soak-seconds want positive integers" >&2
  exit 2
fi
out_dir=${out_dir:-$PWD/overhead-out}
if [[ -n ${WORK_DIR:-} ]]; then
  work=$WORK_DIR
elif [[ $dry_run -eq 1 ]]; then
  work=WORK
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-overhead.XXXXXX")
fi

log() { echo "run.sh: $*" >&2; }

# --- tools: take what is given, build what is not -------------------------------------------
if [[ $dry_run -eq 1 ]]; then
  EXAMPLES_DIR=${EXAMPLES_DIR:-EXAMPLES_DIR}
  FLOOR_LIB=${FLOOR_LIB:-FLOOR_LIB/libcupti_floor.so}
  GPUPERF=${GPUPERF:-gpuperf}
else
  if [[ -z ${EXAMPLES_DIR:-} ]]; then
    EXAMPLES_DIR=$work/examples
    log "building the examples into $EXAMPLES_DIR"
    "$repo/examples/build.sh" "$EXAMPLES_DIR" >/dev/null || { log "examples failed to build"; exit 1; }
  fi
  if [[ -z ${FLOOR_LIB:-} ]]; then
    "$repo/bench/cupti_floor/build.sh" "$work/floor" >/dev/null || { log "floor tracer failed to build"; exit 1; }
    FLOOR_LIB=$work/floor/libcupti_floor.so
  fi
  if [[ -z ${GPUPERF:-} ]]; then
    GPUPERF=$repo/build/gpuperf
  fi
  for path in "$GPUPERF" "$FLOOR_LIB"; do
    [[ -e $path ]] || { log "$path does not exist (set GPUPERF / FLOOR_LIB)"; exit 1; }
  done
  # The CUDA driver dlopens the injection library: it needs an absolute path.
  FLOOR_LIB=$(cd "$(dirname "$FLOOR_LIB")" && pwd)/$(basename "$FLOOR_LIB")
  GPUPERF=$(cd "$(dirname "$GPUPERF")" && pwd)/$(basename "$GPUPERF")
  EXAMPLES_DIR=$(cd "$EXAMPLES_DIR" && pwd)
  mkdir -p "$out_dir" "$work/traces" || exit 1
fi
torch_example=$EXAMPLES_DIR/pytorch_transformer.py
[[ $dry_run -eq 0 && ! -f $torch_example ]] && torch_example=$repo/examples/pytorch_transformer.py

# --- the matrix ------------------------------------------------------------------------------
# workload_cmd NAME: sets CMD to the workload's command line (no profiler).
workload_cmd() {
  case $1 in
    launch_bound) CMD=("$EXAMPLES_DIR/launch_bound" --launches "$launches") ;;
    mock_transformer) CMD=("$EXAMPLES_DIR/mock_transformer" --steps "$mock_steps" --no-check) ;;
    cublas) CMD=("$EXAMPLES_DIR/cublas_gemm" "${cublas_args[@]}") ;;
    multi_stream) CMD=("$EXAMPLES_DIR/multi_stream" --threads 4 --streams 4 --batches "$ms_batches") ;;
    pytorch_infer) CMD=("$PYTHON" "$torch_example" --steps "$torch_steps" --no-check) ;;
    pytorch_train) CMD=("$PYTHON" "$torch_example" --train --steps "$train_steps" --no-check) ;;
    soak) CMD=("$EXAMPLES_DIR/launch_bound" --seconds "$soak_seconds" "${soak_args[@]}") ;;
    *) return 1 ;;
  esac
}

workload_modes() {
  case $1 in
    launch_bound) echo "base floor gp_kernel gp_act gp_all" ;;
    pytorch_*) echo "base floor gp_act gp_all torch torch_stack" ;;
    *) echo "base floor gp_act gp_all" ;;
  esac
}

# mode_cmd WORKLOAD MODE ROUND: sets RUN (the command) and TRACE (measure's trace options).
mode_cmd() {
  local workload=$1 mode=$2 round=$3
  workload_cmd "$workload"
  local trace_dir=$work/traces/$workload.$mode.r$round
  TRACE=()
  case $mode in
    base) RUN=("${CMD[@]}") ;;
    floor) RUN=(env "CUDA_INJECTION64_PATH=$FLOOR_LIB" "${CMD[@]}") ;;
    gp_kernel) RUN=("$GPUPERF" record -o "$trace_dir" --activities kernel --no-stacks --quiet -- "${CMD[@]}") ;;
    gp_act) RUN=("$GPUPERF" record -o "$trace_dir" --no-stacks --quiet -- "${CMD[@]}") ;;
    gp_all) RUN=("$GPUPERF" record -o "$trace_dir" --quiet -- "${CMD[@]}") ;;
    torch|torch_stack)
      local stack=()
      [[ $mode == torch_stack ]] && stack=(--with-stack)
      RUN=("$PYTHON" "$here/torch_profiler_run.py" "${stack[@]}" --trace "$trace_dir.json"
           --examples-dir "$(dirname "$torch_example")" -- "${CMD[@]:2}") ;;
    *) return 1 ;;
  esac
  case $mode in
    gp_*) TRACE=(--gpuperf "$GPUPERF" --trace-dir "$trace_dir") ;;
    torch*) TRACE=(--torch-trace "$trace_dir.json") ;;
  esac
}

selected() {  # selected NAME LIST: is NAME in the comma-separated LIST (empty: all)?
  [[ -z $2 || ",$2," == *",$1,"* ]]
}

# Drop workloads this machine cannot run (missing binary, no torch with CUDA).
plan=()
IFS=',' read -r -a wanted <<<"$workloads"
torch_ok=-1
for workload in "${wanted[@]}"; do
  workload_cmd "$workload" || { log "unknown workload '$workload'"; exit 2; }
  if [[ $dry_run -eq 0 ]]; then
    if [[ $workload == pytorch_* ]]; then
      if [[ $torch_ok -eq -1 ]]; then
        "$PYTHON" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null
        torch_ok=$(( $? == 0 ))
      fi
      [[ $torch_ok -eq 1 ]] || { log "skipping $workload: no torch with CUDA for $PYTHON"; continue; }
    elif [[ ! -x ${CMD[0]} ]]; then
      log "skipping $workload: ${CMD[0]} is missing"
      continue
    fi
  fi
  plan+=("$workload")
done

runs=$out_dir/runs.jsonl
warmups=$work/warmup.jsonl
measure() {  # measure RUNS_FILE WORKLOAD MODE ROUND TIMEOUT
  local file=$1 workload=$2 mode=$3 round=$4 timeout=$5
  mode_cmd "$workload" "$mode" "$round"
  if [[ $dry_run -eq 1 ]]; then
    printf '%-16s %-11s r%-2s' "$workload" "$mode" "$round"
    printf ' %q' "${RUN[@]}"
    printf '\n'
    return
  fi
  "$PYTHON" "$here/overhead.py" measure --runs "$file" --workload "$workload" --mode "$mode" \
    --round "$round" --timeout "$timeout" "${TRACE[@]}" "${keep[@]}" -- "${RUN[@]}"
}

[[ $dry_run -eq 0 ]] && : >"$runs"
log "$rounds rounds of: ${plan[*]:-nothing}; output in $out_dir"
# One unrecorded run per workload first: page cache, driver and module loading warm.
for workload in "${plan[@]}"; do
  measure "$warmups" "$workload" base 0 "$TIMEOUT_S"
done
for ((round = 1; round <= rounds; ++round)); do
  for workload in "${plan[@]}"; do
    for mode in $(workload_modes "$workload"); do
      selected "$mode" "$only_modes" || continue
      measure "$runs" "$workload" "$mode" "$round" "$TIMEOUT_S"
    done
  done
done

# The soak: launches as fast as the threads can for soak_seconds, everything recorded.
if [[ $soak -eq 1 ]] && { [[ $dry_run -eq 1 ]] || [[ -x $EXAMPLES_DIR/launch_bound ]]; }; then
  measure "$runs" soak gp_all 1 $((soak_seconds * 3 + 120))
fi

if [[ $dry_run -eq 1 ]]; then
  exit 0
fi
"$PYTHON" "$here/overhead.py" machine --out "$out_dir/machine.json" --gpuperf "$GPUPERF" \
  --python "$PYTHON"
"$PYTHON" "$here/overhead.py" aggregate --runs "$runs" --machine "$out_dir/machine.json" \
  --json "$out_dir/overhead.json" --table "$out_dir/overhead.txt"
status=$?
# Traces are counted and deleted run by run; what is left is scratch (kept with --keep-traces).
[[ ${#keep[@]} -eq 0 && -z ${WORK_DIR:-} ]] && rm -rf "$work"
exit $status
