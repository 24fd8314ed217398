#!/usr/bin/env bash
# `gpuperf metrics` end to end on the fake libcupti (tests/fakes): the injection library drives
# the range profiler per kernel (replay, serialized), per NVTX range and per time window; the
# report's hardware section names each kernel's bound; the failures of counters (privileges,
# another profiler, an unsupported GPU) are one line each with the fix, and the run goes on;
# `diff` gates on hardware metrics.
source "$(dirname "$0")/lib.sh"
use_fake_app

# metrics NAME [OPTIONS] -- SCENARIO ARGS: runs `gpuperf metrics`, keeps stdout/stderr.
metrics() {
  local name=$1; shift
  "$GPUPERF" metrics -o "$dir/$name" --inject-lib "$lib" "$@" > "$dir/$name.out" 2> "$dir/$name.err"
  local rc=$?
  [[ $rc -eq 0 ]] || fail "$name: exit $rc ($(tail -3 "$dir/$name.err"))"
  "$GPUPERF" report "$dir/$name" --sections hardware --json -o "$dir/$name.json" 2>/dev/null ||
    fail "$name: no JSON report"
}
# json NAME PYTHON-EXPRESSION: evaluates against the report document `d` (prints the result).
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$dir/$1.json"; }
bound() { json "$1" "next((r['bound'] for r in d['hardware'] if '$2' in r['name']), 'none')"; }
ranges() { json "$1" "sum(r['ranges'] for r in d['hardware'] if '$2' in r['name'])"; }

# Per kernel: every measured launch is a range with the set's metrics, kernels of the graph
# launch are never measured, and nothing records a timeline.
metrics kernels -- "$app" metrics 2
[[ $(bound kernels copy_kernel) == memory && $(bound kernels fma_kernel) == compute &&
   $(bound kernels latency_kernel) == latency ]] ||
  fail "per kernel bounds: copy $(bound kernels copy_kernel), fma $(bound kernels fma_kernel), latency $(bound kernels latency_kernel)"
[[ $(ranges kernels copy_kernel) -eq 3 && $(ranges kernels fma_kernel) -eq 3 &&
   $(ranges kernels latency_kernel) -eq 2 ]] ||
  fail "launches measured: copy $(ranges kernels copy_kernel), fma $(ranges kernels fma_kernel), latency $(ranges kernels latency_kernel)"
[[ $(json kernels "len(d['hardware'])") -eq 3 ]] || fail "the graph's kernels were measured"
[[ $(json kernels "all(r['serialized'] and r['passes'] > 1 for r in d['hardware'])") == True ]] ||
  fail "kernel replay ranges not marked serialized with their passes"
grep -q "Hardware metrics per kernel" "$dir/kernels.out" || fail "no hardware table on stdout"
grep -q "copy_kernel: memory bound: memory 93% of peak vs SM 22%" "$dir/kernels.out" ||
  fail "the bound's numbers are not shown: $(grep -m1 bound "$dir/kernels.out")"
"$GPUPERF" dump "$dir/kernels" | grep -q '^kernel ' && fail "a metrics run recorded kernel records"
[[ $("$GPUPERF" dump "$dir/kernels" | grep -c '^metric_range ') -eq 8 ]] || fail "metric_range records"
# Every range's kernel is the launch that ran it (the correlation id links its stack).
"$GPUPERF" dump "$dir/kernels" | grep '^metric_range ' | grep -q 'correlation_id=0 ' &&
  fail "a kernel range without its launch's correlation id"

# --kernel: only matching kernels are replayed.
metrics only_copy --kernel copy -- "$app" metrics 2
[[ $(json only_copy "len(d['hardware'])") -eq 1 && $(ranges only_copy copy_kernel) -eq 3 ]] ||
  fail "--kernel copy measured $(json only_copy "[r['name'] for r in d['hardware']]")"

# Per NVTX range (outermost only) and per window: one pass, kernels concurrent.
metrics nvtx --ranges nvtx -- "$app" metrics 2
[[ $(json nvtx "[(r['name'], r['kind'], r['ranges'], r['passes'], r['serialized']) for r in d['hardware']]") == "[('step', 'nvtx', 1, 1, False)]" ]] ||
  fail "nvtx ranges: $(json nvtx "[(r['name'], r['kind'], r['ranges'], r['passes'], r['serialized']) for r in d['hardware']]")"
grep -q "Hardware metrics per range" "$dir/nvtx.out" || fail "no per-range table"
metrics windows --ranges window:1ms -- "$app" metrics 2
[[ $(json windows "len([r for r in d['hardware'] if r['kind'] == 'window'])") -ge 1 ]] ||
  fail "no time window measured"
expect_exit 2 "$GPUPERF" metrics --ranges sometimes -- "$app" metrics
expect_exit 2 "$GPUPERF" metrics --set everything -- "$app" metrics
expect_exit 2 "$GPUPERF" metrics --kernel copy --ranges nvtx -- "$app" metrics

# Failures: one line with the fix, the run goes on, the count says so.
failure() {  # failure NAME NEEDLE ENV...
  local name=$1 needle=$2; shift 2
  env "$@" "$GPUPERF" metrics -o "$dir/$name" --inject-lib "$lib" -- "$app" metrics 1 \
    > "$dir/$name.out" 2> "$dir/$name.err"
  local rc=$?
  [[ $rc -eq 0 ]] || fail "$name: exit $rc"
  [[ $(grep -c "hardware metrics unavailable" "$dir/$name.err") -eq 1 ]] ||
    fail "$name: want one line, got: $(grep "unavailable" "$dir/$name.err")"
  grep "hardware metrics unavailable" "$dir/$name.err" | grep -q -- "$needle" ||
    fail "$name: the line lacks '$needle': $(grep unavailable "$dir/$name.err")"
  "$GPUPERF" dump "$dir/$name" | grep -q '# hardware_unavailable$' || fail "$name: not counted"
  grep -q "no hardware metrics were measured.*the lines above say why" "$dir/$name.err" || fail "$name: no closing line"
}
failure privileges "NVreg_RestrictProfilingToAdminUsers=0" FAKE_CUPTI_FAIL=cuptiRangeProfilerEnable=35
failure busy "dcgmi profile --pause" FAKE_CUPTI_FAIL=cuptiProfilerGetCounterAvailability=26
failure vgpu "without vGPU" FAKE_CUPTI_UNSUPPORTED=vGPU
failure chip "CUDA toolkit at least as new" FAKE_CUPTI_FAIL=cuptiProfilerHostInitialize=46

# diff gates on hardware metrics.
"$GPUPERF" report "$dir/kernels" --json -o "$dir/base.json" || fail "report --json"
expect_exit 0 "$GPUPERF" diff "$dir/base.json" "$dir/kernels" --fail-if 'kernel:copy:dram_pct<50'
expect_exit 1 "$GPUPERF" diff "$dir/base.json" "$dir/kernels" --fail-if 'kernel:copy:dram_pct<95'
expect_stderr_contains "kernel copy_kernel dram_pct is 92, violating kernel:copy:dram_pct<95" \
  "$GPUPERF" diff "$dir/base.json" "$dir/kernels" --fail-if 'kernel:copy:dram_pct<95'
expect_exit 1 "$GPUPERF" diff "$dir/base.json" "$dir/kernels" --fail-if 'kernel:gemm:sm_pct<50'
expect_exit 0 "$GPUPERF" diff "$dir/base.json" "$dir/kernels" --fail-if 'kernel:.:sm_pct<-10%'
expect_exit 1 "$GPUPERF" diff "$dir/base.json" "$dir/only_copy" --fail-if 'kernel:fma:sm_pct<1'
expect_exit 0 "$GPUPERF" diff "$dir/base.json" "$dir/nvtx" --fail-if 'range:step:dram_pct<1'
expect_exit 2 "$GPUPERF" diff "$dir/base.json" "$dir/kernels" --fail-if 'kernel:copy:speed<50'
expect_exit 2 "$GPUPERF" diff "$dir/base.json" "$dir/kernels" --fail-if 'kernel:copy:dram_pct<50ms'
finish
