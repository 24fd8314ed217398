#!/usr/bin/env bash
# The overhead harness without a GPU: run.sh --dry-run runs the modes in alternation, and
# overhead.py measure parses the summary and floor lines, reads a real gpuperf trace
# directory (records, kernels, stats) with the real CLI, kills a command at its timeout, and
# sees the application's peak RSS.
source "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
measure=("python3" "$SRC/bench/overhead/overhead.py" measure --runs "$dir/runs.jsonl")
field() {  # field N EXPR: EXPR evaluated on line N of runs.jsonl (as `row`)
  python3 -c "import json,sys; row=[json.loads(l) for l in open('$dir/runs.jsonl')][$1]; print($2)"
}

# --- dry run: A B C A B C order, three rounds, a warm-up per workload, the soak last --------
matrix=$(bash "$SRC/bench/overhead/run.sh" --dry-run --quick --workloads launch_bound,cublas 2>/dev/null)
order=$(awk '{print $1 "." $2 "." $3}' <<<"$matrix" | tr '\n' ' ')
want="launch_bound.base.r0 cublas.base.r0 "
for round in 1 2 3; do
  want+="launch_bound.base.r$round launch_bound.floor.r$round launch_bound.gp_kernel.r$round "
  want+="launch_bound.gp_act.r$round launch_bound.gp_all.r$round "
  want+="cublas.base.r$round cublas.floor.r$round cublas.gp_act.r$round cublas.gp_all.r$round "
done
want+="soak.gp_all.r1 "
[[ $order == "$want" ]] || fail "dry-run order: $order"
[[ $matrix == *"gp_all      r1  gpuperf record -o WORK/traces/launch_bound.gp_all.r1 --quiet -- EXAMPLES_DIR/launch_bound --launches 200000"* ]] ||
  fail "dry-run gp_all command: $(grep 'launch_bound *gp_all *r1' <<<"$matrix")"
[[ $matrix == *"CUDA_INJECTION64_PATH=FLOOR_LIB/libcupti_floor.so EXAMPLES_DIR/launch_bound"* ]] ||
  fail "dry-run floor command"
[[ $(grep -c 'gp_act.*--no-stacks' <<<"$matrix") -eq 6 ]] || fail "gp_act runs without --no-stacks"
expect_exit 2 bash "$SRC/bench/overhead/run.sh" --dry-run --workloads no_such_workload
expect_exit 2 bash "$SRC/bench/overhead/run.sh" --dry-run --rounds 0

# --- measure: a summary line and a floor line -----------------------------------------------
"${measure[@]}" --workload w --mode floor --round 1 -- bash -c \
  'echo "gpuperf-example: name=w kernels=12 memcpy_bytes=0 memset_bytes=0 nvtx_ranges=2 graph_launches=0 graph_kernels=0 wall_ms=5.500 us_per_launch=3.2500"; echo "cupti-floor: kernels=12 dropped=3" >&2' \
  >/dev/null || fail "measure (floor) failed"
[[ $(field 0 'row["status"], row["summary"]["kernels"], row["summary"]["us_per_launch"], row["kernel_records"], row["drops"]') == "ok 12 3.25 12 3" ]] ||
  fail "floor run row: $(sed -n 1p "$dir/runs.jsonl")"

# --- measure: a gpuperf trace directory, read with the real CLI -----------------------------
trace=$dir/trace
"${measure[@]}" --workload w --mode gp_all --round 1 --gpuperf "$GPUPERF" --trace-dir "$trace" \
  -- bash -c "mkdir -p '$trace' && '$SYNTH' -o '$trace/app.1.gpt' --kernels 300 >/dev/null" \
  >/dev/null || fail "measure (gp_all) failed"
"$SYNTH" -o "$dir/same.gpt" --kernels 300 >/dev/null  # the generator is deterministic
want_records=$("$GPUPERF" dump "$dir/same.gpt" | sed -n 's/^# files=.* records=\([0-9]*\).*/\1/p')
[[ $(field 1 'row["kernel_records"], row["drops"], row["stats"]["cupti_dropped_records"], row["bytes"] > 0') == "300 0 0 True" ]] ||
  fail "trace row: $(sed -n 2p "$dir/runs.jsonl")"
[[ -n $want_records && $(field 1 'row["records"]') == "$want_records" ]] ||
  fail "records: $(field 1 'row["records"]'), dump says $want_records"
[[ ! -e $trace ]] || fail "the trace directory was not removed after counting"

# --- measure: the timeout kills the whole process group -------------------------------------
start=$SECONDS
"${measure[@]}" --workload w --mode base --round 1 --timeout 1 -- bash -c 'sleep 30 & sleep 30' \
  >/dev/null 2>&1
[[ $((SECONDS - start)) -lt 15 ]] || fail "the timeout did not stop the run"
[[ $(field 2 'row["status"]') == "timeout" ]] || fail "timeout row: $(sed -n 3p "$dir/runs.jsonl")"

# --- measure: a failing command, and the application's peak RSS ----------------------------
"${measure[@]}" --workload w --mode base --round 2 -- bash -c 'exit 3' >/dev/null 2>&1
[[ $(field 3 'row["status"], row["rc"]') == "failed 3" ]] || fail "failed row: $(sed -n 4p "$dir/runs.jsonl")"
"${measure[@]}" --workload w --mode base --round 3 -- python3 -c \
  'import time; b = bytearray(200 << 20); time.sleep(0.5)' >/dev/null
[[ $(field 4 'row["app_rss_kb"] >= 200 * 1024') == "True" ]] ||
  fail "peak RSS: $(field 4 'row["app_rss_kb"]') KiB, want >= 200 MiB"

# --- run.sh for real, with stand-ins: examples that only print a summary line, and a gpuperf
# whose `record` runs the command and writes a synthetic 300-kernel trace ---------------------
mkdir -p "$dir/ex" "$dir/bin"
for name in launch_bound mock_transformer cublas_gemm multi_stream; do
  cat >"$dir/ex/$name" <<EOF2
#!/usr/bin/env bash
echo "gpuperf-example: name=$name kernels=300 memcpy_bytes=0 memset_bytes=0 nvtx_ranges=0 graph_launches=0 graph_kernels=0 wall_ms=2.000 us_per_launch=3.0 launches_per_s=400000"
EOF2
  chmod +x "$dir/ex/$name"
done
cat >"$dir/bin/gpuperf" <<EOF2
#!/usr/bin/env bash
[[ \$1 == record ]] || exec "$GPUPERF" "\$@"
shift
while [[ \$1 != -- ]]; do [[ \$1 == -o ]] && { out=\$2; shift; }; shift; done
shift
"\$@" || exit
mkdir -p "\$out" && "$SYNTH" -o "\$out/app.\$\$.gpt" --kernels 300 >/dev/null
EOF2
chmod +x "$dir/bin/gpuperf"
: >"$dir/libfloor.so"
GPUPERF=$dir/bin/gpuperf EXAMPLES_DIR=$dir/ex FLOOR_LIB=$dir/libfloor.so PYTHON=python3 \
  WORK_DIR=$dir/work bash "$SRC/bench/overhead/run.sh" --quick --rounds 2 --soak-seconds 1 \
  --workloads launch_bound,mock_transformer,cublas,multi_stream --out "$dir/out" \
  >"$dir/run.out" 2>"$dir/run.err" || fail "run.sh failed: $(tail -5 "$dir/run.err")"
for file in runs.jsonl overhead.json overhead.txt machine.json; do
  [[ -s $dir/out/$file ]] || fail "run.sh wrote no $file"
done
[[ $(wc -l <"$dir/out/runs.jsonl") -eq $((2 * (5 + 4 + 4 + 4) + 1)) ]] ||
  fail "runs.jsonl has $(wc -l <"$dir/out/runs.jsonl") runs, want 35"
table=$(cat "$dir/out/overhead.txt")
[[ $(tail -n 1 "$dir/run.out") == "$(tail -n 1 <<<"$table")" ]] || fail "the table is not printed last"
[[ $table == *"300/300"* && $table == *"gpuperf kernels"* && $table == *"zero loss"* ]] ||
  fail "table: $table"
[[ $table != *"failed"* ]] || fail "some stand-in runs failed: $table"
! grep -q Traceback "$dir/run.err" || fail "run.sh: $(grep -A3 -m1 Traceback "$dir/run.err")"
[[ $(grep -c 'r0 ok' "$dir/run.out") -eq 4 ]] || fail "want 4 warm-up runs: $(grep r0 "$dir/run.out")"

finish
