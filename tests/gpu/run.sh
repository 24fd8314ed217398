#!/usr/bin/env bash
# All GPU checks in one call (CI has no GPU; this runs on the GPU machine).
#
# usage: [GPUPERF_GPU_CHECKS=LIST] tests/gpu/run.sh BIN_DIR EXAMPLES_DIR
#   BIN_DIR       gpuperf, libgpuperf_inject.so (+ libunwind.so.8), built on the dev machine;
#                 libcupti_floor.so too if built there (else bench/cupti_floor/build.sh runs)
#   EXAMPLES_DIR  examples built by examples/build.sh
#   GPUPERF_GPU_CHECKS  comma-separated, default all:
#     examples  every example recorded and checked against its own counts, report/flamegraph/
#               export, the CI fixtures (fixtures.tar.gz)
#     soak      launch_bound, 16 threads x 4 streams for GPUPERF_SOAK_SECONDS (60) s, under
#               the CUPTI floor tracer and under gpuperf's defaults: rate, launched, recorded,
#               dropped, peak added RSS (tests/gpu/soak.py); passes only with nothing dropped
#     tree      bash -c running two examples: one trace each, one summary and report
#     kill      SIGKILL to the recorded program mid-run: record's honest line and exit 137
#   (soak + tree + kill take about 3 minutes of GPU time)
#     NAME      any tests/gpu/checks/NAME.sh (see the end of this file)
# Writes under $OUT: results.txt (every check), summary.txt (the table printed last),
# fixtures.tar.gz (small real traces with a PROVENANCE file, and raw CUPTI buffers for the
# replay test), soak.json, machine.txt.
set -uo pipefail
bin=$(cd "${1:?BIN_DIR}" && pwd)
ex=$(cd "${2:?EXAMPLES_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
out=${OUT:-/tmp/gpuperf-gpu}
work=/tmp/gpuperf-gpu-work
rm -rf "$work"; mkdir -p "$out" "$work/fixtures" "$work/buffers"
gp=$bin/gpuperf
results=$out/results.txt
: > "$results"
failed=0

{
  # One line whatever the number of GPUs: the lines below are read by number.
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1
  nvcc --version | tail -1
  uname -r
  python3 -c 'import torch; print("torch", torch.__version__)' 2>&1 | tail -1
} > "$out/machine.txt" 2>&1
gpu=$(head -1 "$out/machine.txt")

checks=${GPUPERF_GPU_CHECKS:-all}
want() { [[ $checks == all || ",$checks," == *",$1,"* ]]; }
summary=()  # "check|PASS or FAIL|detail" rows for the table printed last
note() { summary+=("$1|$2|$3"); [[ $2 == FAIL ]] && failed=$((failed + 1)); }

# joined_of FILE: a flamegraph's "N/M kernels joined" from its stderr FILE, without the
# thousands separators it prints (2,124/2,124), or nothing.
joined_of() { grep -o '[0-9,]*/[0-9,]* kernels joined' "$1" | tr -d ,; }
# all_joined JOINED [MIN]: true when JOINED (joined_of's) joins every kernel, MIN at least.
all_joined() {
  local joined=$1 least=${2:-0}
  [[ -n $joined && ${joined%%/*} == $(cut -d/ -f2 <<<"${joined%% *}") && ${joined%%/*} -ge $least ]]
}
# trace_stat DIR NAME: stat NAME's last value in the recording DIR, or nothing if never counted.
trace_stat() { "$gp" dump "$1" 2>/dev/null | grep "# $2\$" | tail -1 | sed 's/.*value=\([0-9]*\).*/\1/'; }

# save_fixture NAME RECORDING TARBALL EXAMPLE_OUT CMD...: a recording of CMD kept as a CI
# fixture (tests/data/h100/NAME/): its trace files and a PROVENANCE, tarred, when under 400 KB.
# Prints "fixture N KB", or why not (and returns 1).
save_fixture() {
  local name=$1 recording=$2 tarball=$3 said=$4; shift 4
  local size; size=$(du -sk "$recording" | cut -f1)
  [[ $size -lt 400 ]] || { echo "the trace is $size KB, over the 400 KB of a fixture"; return 1; }
  local fixture=$work/fixtures/$name
  rm -rf "$fixture"; mkdir -p "$fixture"
  cp "$recording"/*.gpt "$fixture/"
  printf 'GPU: %s\nCUDA: %s\nkernel: %s\ntorch: %s\ncommand: gpuperf record -- %s\nexample said: %s\n' \
    "$gpu" "$(sed -n 2p "$out/machine.txt")" "$(uname -r)" \
    "$(python3 -c 'import torch, sys; print(torch.__version__, "Python", sys.version.split()[0])')" \
    "${*/#$src\//}" "$(grep -h 'gpuperf-example:' "$said" | head -1)" > "$fixture/PROVENANCE"
  tar -C "$(dirname "$fixture")" -czf "$tarball" "$name"
  echo "fixture $size KB"
}

# record NAME EXPECTED_FUNCTIONS -- CMD...: record, check against the example's own line.
record() {
  local name=$1 functions=$2; shift 3
  local dir=$work/rec/$name
  local extra=()
  [[ $name == vector_add || $name == cuda_graph ]] && extra=(--save-buffers "$work/buffers/$name")
  mkdir -p "$work/buffers/$name"
  local t0=$SECONDS
  timeout 300 "$gp" record -o "$dir" --force "${extra[@]}" -- "$@" > "$work/$name.out" 2> "$work/$name.err"
  local rc=$?
  echo "== $name: exit $rc ($((SECONDS - t0)) s) $(grep -h 'gpuperf-example:' "$work/$name.out" | head -1)" | tee -a "$results"
  if [[ $rc -ne 0 ]]; then
    tail -5 "$work/$name.err" | tee -a "$results"
    failed=$((failed + 1))
    return
  fi
  grep -E "^gpuperf: |^  " "$work/$name.err" | sed 's/^/   /' >> "$results"
  # How launch stacks were taken: frame-pointer stacks confirmed or refused by libunwind.
  "$gp" dump "$dir" 2>/dev/null | grep -E '# (fp_stacks_verified|fp_stacks_rejected|unique_stacks)$' |
    sed 's/^stat [^ ]* /   /' | sort -u >> "$results"
  local args=()
  for f in $functions; do args+=(--expect-function "$f"); done
  # Counted from a file, not through `| grep -q` (under pipefail, tee's SIGPIPE would hide it).
  python3 "$src/tests/gpu/check_recording.py" "$gp" "$dir" "$work/$name.out" "${args[@]}" \
    > "$work/$name.check" 2>&1
  cat "$work/$name.check" >> "$results"
  grep -q '^FAIL' "$work/$name.check" && failed=$((failed + 1))
  # Small traces become CI fixtures.
  local size; size=$(du -sk "$dir" | cut -f1)
  if [[ $size -lt 400 ]]; then
    mkdir -p "$work/fixtures/$name"
    cp "$dir"/*.gpt "$work/fixtures/$name/"
    printf 'GPU: %s\nCUDA: %s\nkernel: %s\ncommand: gpuperf record -- %s\nexample said: %s\n' \
      "$gpu" "$(sed -n 2p "$out/machine.txt")" "$(uname -r)" "$*" \
      "$(grep -h 'gpuperf-example:' "$work/$name.out" | head -1)" > "$work/fixtures/$name/PROVENANCE"
  fi
}

examples_checks() {
record vector_add "vector_add" -- "$ex/vector_add"
record vector_add_static "vector_add" -- "$ex/vector_add_static"
record mock_transformer "attention layer_norm matmul mlp transformer_layer" -- "$ex/mock_transformer" --steps 3
record multi_stream "" -- "$ex/multi_stream"
record cuda_graph "" -- "$ex/cuda_graph"
record memcpy_kinds "" -- "$ex/memcpy_kinds"
record driver_launch "" -- "$ex/driver_launch"
record cublas_gemm "" -- "$ex/cublas_gemm"
record launch_bound "" -- "$ex/launch_bound" --launches 200000
record pytorch_transformer "" -- python3 "$src/examples/pytorch_transformer.py" --steps 5
record pytorch_train "" -- python3 "$src/examples/pytorch_transformer.py" --train --steps 5

# --- PyTorch launch stacks with Python frames (docs/recording.md "Python frames") ---
# python_stacks NAME: the default flame graph joins every kernel, shows the example's own
# forward functions with file:line and no interpreter frames; --python-internals brings
# the eval loop back. Leaves NAME.folded, NAME.svg and NAME.internals.folded in $OUT.
python_stacks() {
  local name=$1 dir=$work/rec/$1 folded=$out/$1.folded
  [[ -d $dir ]] || { echo "FAIL $name: no recording" | tee -a "$results"; failed=$((failed + 1)); return; }
  "$gp" flamegraph --folded -o "$folded" "$dir" 2> "$work/$name.flame.err"
  "$gp" flamegraph -o "$out/$name.svg" "$dir" 2>/dev/null
  "$gp" flamegraph --folded --python-internals -o "$out/$name.internals.folded" "$dir" 2>/dev/null
  # Counts print with thousands separators (2,124/2,124): compare them without.
  local joined; joined=$(joined_of "$work/$name.flame.err")
  py_check() {  # py_check OK WHAT
    if [[ $1 == 1 ]]; then echo "ok   $name: $2" | tee -a "$results"
    else echo "FAIL $name: $2" | tee -a "$results"; failed=$((failed + 1)); fi
  }
  py_check "$(all_joined "$joined" && echo 1)" \
    "every kernel joined to a launch stack ($joined)"
  local own; own=$(grep -o '[A-Za-z_.]*forward (pytorch_transformer\.py:[0-9]*)' "$folded" | sort -u)
  py_check "$([[ $(wc -l <<<"$own") -ge 3 && -n $own ]] && echo 1)" \
    "the model's forward functions with file:line: $(tr '\n' ' ' <<<"$own")"
  py_check "$(grep -q '_PyEval_EvalFrameDefault\|python3\.[0-9]*+0x\|libpython[^;]*+0x' "$folded" || echo 1)" \
    "no interpreter frames in the default flame graph"
  py_check "$(grep -q '_PyEval_EvalFrameDefault' "$out/$name.internals.folded" && echo 1)" \
    "--python-internals keeps _PyEval_EvalFrameDefault"
  # What sits right under the model's innermost forward frame (torch's Python, then ops).
  echo "   under the model's frames: $(grep -o 'pytorch_transformer\.py:[0-9]*);[^;]*;[^;]*' "$folded" |
    cut -d';' -f2- | sort | uniq -c | sort -rn | head -3 | tr -s ' ' | tr '\n' '|')" | tee -a "$results"
  "$gp" dump "$dir" 2>/dev/null | grep -E '# python_' | sed 's/^stat [^ ]* /   /' | sort -u >> "$results"
}
python_stacks pytorch_transformer
python_stacks pytorch_train
# Backward runs on the autograd engine's threads, which have no Python frames: labelled.
grep -q '^\[autograd backward\];' "$out/pytorch_train.folded" \
  && echo "ok   pytorch_train: backward kernels under [autograd backward]" | tee -a "$results" \
  || { echo "FAIL pytorch_train: no [autograd backward] stacks" | tee -a "$results"; failed=$((failed + 1)); }

# Behaviour checks beyond counts.
echo "== no CUDA: $("$gp" record -o "$work/rec/nocuda" -- true 2>&1 | tail -1) (exit $?)" | tee -a "$results"
echo "== report/flamegraph/export on mock_transformer" | tee -a "$results"
for cmd in "report" "flamegraph --folded -o $work/mock.folded" "export -o $work/mock.perfetto-trace"; do
  "$gp" $cmd "$work/rec/mock_transformer" > "$work/cmd.out" 2>&1; echo "   gpuperf $cmd: exit $?" | tee -a "$results"
done
head -c 4000 "$work/cmd.out" > /dev/null
"$gp" report "$work/rec/mock_transformer" > "$out/mock_transformer_report.txt" 2>&1
"$gp" flamegraph "$work/rec/mock_transformer" -o "$out/mock_transformer.svg" >/dev/null 2>&1

cp -r "$work/buffers" "$work/fixtures/cupti_buffers"
tar -C "$work" -czf "$out/fixtures.tar.gz" fixtures
}

# The zero-loss soak: nothing dropped with default settings at the floor tracer's rate.
soak_check() {
  local floor=$bin/libcupti_floor.so
  if [[ ! -f $floor ]]; then
    "$src/bench/cupti_floor/build.sh" "$work/floor" > "$work/floor-build.log" 2>&1 &&
      floor=$work/floor/libcupti_floor.so
  fi
  echo "== soak" | tee -a "$results"
  python3 "$src/tests/gpu/soak.py" --gpuperf "$gp" --launch-bound "$ex/launch_bound" \
    --floor "$floor" --seconds "${GPUPERF_SOAK_SECONDS:-60}" --threads 16 --streams 4 \
    --work "$work" --json "$out/soak.json" > "$work/soak.txt" 2>&1
  local rc=$?
  sed 's/^/   /' "$work/soak.txt" | tee -a "$results"
  local verdict; verdict=$(sed -n 's/^soak verdict: //p' "$work/soak.txt")
  note soak "$([[ $rc -eq 0 ]] && echo PASS || echo FAIL)" "${verdict#*: }"
}

# A process tree: two CUDA programs under one bash -c, one trace each, one report.
tree_check() {
  local dir=$work/rec/tree
  echo "== tree: bash -c 'vector_add && multi_stream'" | tee -a "$results"
  timeout 300 "$gp" record -o "$dir" --force -- bash -c "'$ex/vector_add' && '$ex/multi_stream'" \
    > "$work/tree.out" 2> "$work/tree.err"
  local rc=$? problems=()
  local traces; traces=$(ls "$dir"/*.gpt 2>/dev/null | wc -l)
  local launched; launched=$(sed -n 's/^gpuperf-example: .* kernels=\([0-9]*\) .*/\1/p' "$work/tree.out" |
    awk '{s += $1} END {print s + 0}')
  local recorded; recorded=$(sed -n 's/^  kernels *\([0-9,]*\).*/\1/p' "$work/tree.err" | tr -d ,)
  [[ $rc -eq 0 ]] || problems+=("exit $rc")
  [[ $traces -eq 2 ]] || problems+=("$traces trace files, want 2")
  grep -q "recorded 2 processes" "$work/tree.err" || problems+=("summary does not count 2 processes")
  [[ ${recorded:-0} -eq $launched && $launched -gt 0 ]] || problems+=("recorded ${recorded:-?} of $launched kernels")
  "$gp" report "$dir" > "$work/tree.report" 2>&1 || problems+=("report failed")
  grep -E "^gpuperf: |^  " "$work/tree.err" | sed 's/^/   /' >> "$results"
  note tree "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-2 traces, ${recorded:-?} of $launched kernels, one report}"
}

# SIGKILL to the recorded program: nothing flushes at the end; record says what that means
# and exits as a shell would.
kill_check() {
  local dir=$work/rec/kill
  echo "== kill: SIGKILL to launch_bound after 3 s" | tee -a "$results"
  "$gp" record -o "$dir" --force -- "$ex/launch_bound" --seconds 30 --threads 2 \
    > "$work/kill.out" 2> "$work/kill.err" &
  local record_pid=$! app=""
  for _ in $(seq 50); do
    app=$(pgrep -P "$record_pid" | head -1)
    [[ -n $app ]] && break
    sleep 0.1
  done
  sleep 3
  [[ -n $app ]] && kill -KILL "$app"
  wait "$record_pid"
  local rc=$? problems=()
  [[ -n $app ]] || problems+=("never saw the recorded program")
  [[ $rc -eq 137 ]] || problems+=("record exited $rc, want 137")
  grep -q "was killed by signal 9 (SIGKILL): up to one flush period (500 ms) of records may be missing" \
    "$work/kill.err" || problems+=("no honest end-of-run line")
  grep -q "lost      nothing" "$work/kill.err" && problems+=("summary says lost nothing")
  local recorded; recorded=$(sed -n 's/^  kernels *\([0-9,]*\).*/\1/p' "$work/kill.err" | tr -d ,)
  [[ ${recorded:-0} -gt 0 ]] || problems+=("nothing recorded before the kill")
  grep -E "^gpuperf: |^  " "$work/kill.err" | sed 's/^/   /' >> "$results"
  note kill "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-exit 137, ${recorded:-?} kernels kept, the summary says what is missing}"
}

# A program that runs torch.profiler itself, under gpuperf: whoever holds CUPTI, the outcome is
# deterministic and said in one line (docs/recording.md, "Other profilers"). Observed, not
# assumed: the check records what each side got.
profilers_check() {
  local dir=$work/rec/profilers
  echo "== profilers: torch.profiler inside gpuperf record" | tee -a "$results"
  timeout 300 "$gp" record -o "$dir" --force -- python3 "$src/tests/gpu/torch_profiler_inside.py" \
    > "$work/profilers.out" 2> "$work/profilers.err"
  local rc=$? problems=()
  local events; events=$(sed -n 's/.*torch_profiler_cuda_events=\([0-9]*\).*/\1/p' "$work/profilers.out")
  local recorded; recorded=$(sed -n 's/^  kernels *\([0-9,]*\).*/\1/p' "$work/profilers.err" | tr -d ,)
  # As designed (docs/recording.md, "Other profilers"): gpuperf holds CUPTI and keeps every
  # kernel; Kineto is refused and says so itself ("CUDA profiler activities will be missing").
  local lines; lines=$(grep -c "CUDA profiler activities will be missing" "$work/profilers.err")
  [[ $rc -eq 0 ]] || problems+=("exit $rc")
  [[ -n $events ]] || problems+=("the program did not finish")
  [[ ${recorded:-0} -gt 0 || ${events:-0} -gt 0 ]] || problems+=("neither side has the kernels")
  [[ ${lines:-0} -ge 1 ]] || problems+=("torch.profiler did not say it lost its CUDA events")
  [[ ${events:-1} -eq 0 ]] || problems+=("torch.profiler got CUDA events: the design changed")
  sed 's/^/   /' "$work/profilers.err" | grep -vE "^   (STAGE|\[W)" | head -20 >> "$results"
  # With --no-stacks gpuperf does not subscribe: who gets the CUDA events then (informational).
  timeout 300 "$gp" record --no-stacks -o "$dir-nostacks" --force -- \
    python3 "$src/tests/gpu/torch_profiler_inside.py" > "$work/profilers2.out" 2> "$work/profilers2.err"
  echo "   --no-stacks: $(grep -h torch_profiler_cuda_events "$work/profilers2.out")" \
    "gpuperf: $(grep -hE '^  kernels|^  lost|another CUPTI' "$work/profilers2.err" | tr -s ' ' | tr '\n' ';')" \
    >> "$results"
  note profilers "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-torch.profiler got ${events:-?} CUDA events, gpuperf ${recorded:-0} kernels}"
}

if want examples; then
  before=$failed
  examples_checks  # counts its own failures
  summary+=("examples|$([[ $failed -eq $before ]] && echo PASS || echo FAIL)|$((failed - before)) failed (see results.txt)")
fi
want soak && soak_check
want tree && tree_check
want kill && kill_check
want profilers && profilers_check

# More checks, one file each (tests/gpu/checks/NAME.sh): each defines NAME_check, which uses
# record/note/want and the variables above; it runs when NAME is wanted.
for file in "$src"/tests/gpu/checks/*.sh; do
  [[ -e $file ]] || continue
  name=$(basename "$file" .sh)
  source "$file"
  want "$name" && "${name}_check"
done

{
  echo "GPU checks on $gpu ($checks):"
  printf '  %-9s %-5s %s\n' check result detail
  for row in "${summary[@]}"; do
    IFS='|' read -r name verdict detail <<<"$row"
    printf '  %-9s %-5s %s\n' "$name" "$verdict" "$detail"
  done
  echo "GPU checks: $failed failed"
} | tee "$out/summary.txt" | tee -a "$results"
exit $((failed > 0))
