#!/usr/bin/env bash
# `gpuperf record --pc-sampling` end to end on the fake libcupti: the injection library saves
# the module's cubin by CUPTI's CRC and collects the samples (periodically and at exit);
# `record` maps them to source lines from the cubin's line table (a real sm_90 cubin,
# tests/data/metrics); report, source and flamegraph --pc-frames show them; a cubin without
# -lineinfo and a PC sampling failure are each one line.
source "$(dirname "$0")/lib.sh"
bin=$GPUPERF_BINARY_DIR
lib=$bin/src/inject/libgpuperf_inject.so
app=$bin/tests/fakes/fake_cuda_app
cubin=$SRC/tests/data/metrics/hw_bound.sm_90.cubin
[[ -x $app && -f $lib ]] || { echo "skip: no injection library or fake app in this build"; exit 77; }
command -v readelf >/dev/null || { echo "skip: no readelf to read the fixture's line table"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
export GPUPERF_NVDISASM=none  # what a machine without the CUDA toolkit sees
kernel=_Z15hot_loop_kernelPfPKfii

# Offsets of the hot loop's body (lines 51 and 52 of the fixture's source, hot_loop_kernel's
# only) and of line 46 outside it, by binutils' reading of the cubin.
offset_of() { readelf --debug-dump=decodedline "$cubin" | awk -v l="$1" '$1 == "hw_bound.cu" && $2 == l {print $3; exit}'; }
in51=$(offset_of 51) in52=$(offset_of 52) out46=$(offset_of 46)
[[ -n $in51 && -n $in52 && -n $out46 ]] || fail "fixture lines not found by readelf"
samples=("$in51:2:600" "$in51:9:100" "$in52:5:250" "$out46:9:50")  # 2 long_scoreboard, 5 math_pipe_throttle, 9 selected

record() {  # record NAME CUBIN ENV...
  local name=$1 file=$2; shift 2
  env "$@" "$GPUPERF" record --pc-sampling -o "$dir/$name" --inject-lib "$lib" -- \
    "$app" pc_sampling "$file" "$kernel" "${samples[@]}" > "$dir/$name.out" 2> "$dir/$name.err"
  local rc=$?
  [[ $rc -eq 0 ]] || fail "$name: exit $rc ($(tail -3 "$dir/$name.err"))"
}

record lines "$cubin"
crc=$(sed -n 's/.*cubin_crc=\([0-9a-f]*\).*/\1/p' "$dir/lines.out")
cmp -s "$cubin" "$dir/lines/cubins/$crc.cubin" || fail "the module's cubin was not saved as cubins/$crc.cubin"
dump=$("$GPUPERF" dump "$dir/lines")
[[ $(grep -c '^pc_sample ' <<<"$dump") -ge 3 ]] || fail "pc_sample records: $(grep -c '^pc_sample ' <<<"$dump")"
grep -q "stall=\"smsp__pcsamp_warps_issue_stalled_long_scoreboard\":600" <<<"$dump" ||
  fail "stall reasons not named by their index"
grep -q "sass_line cubin=0x$crc function=\"$kernel\" pc=0x${in51#0x} file=\"/tmp/gpuperf-fixture/hw_bound.cu\" line=51" <<<"$dump" ||
  fail "no line for offset $in51: $(grep -m2 '^sass_line' <<<"$dump")"
grep -q '# pc_samples$' <<<"$dump" && [[ $(grep '# pc_samples$' <<<"$dump" | tail -1 | sed 's/.*value=\([0-9]*\).*/\1/') -eq 1000 ]] ||
  fail "pc_samples stat is not 1000"
grep -q "source lines for 1" "$dir/lines.err" || fail "record did not say it mapped lines: $(grep PC "$dir/lines.err")"
grep -q "PC samples 1,000" "$dir/lines.err" || fail "the summary does not count the samples"

# The report's hot lines: 95% of the samples on the loop, line 51 first.
"$GPUPERF" report "$dir/lines" > "$dir/report.txt" || fail "report"
grep -q "PC sampling: hot lines" "$dir/report.txt" || fail "no hot-lines section"
grep -A3 "hot_loop_kernel" "$dir/report.txt" | grep -q "70.0%.*hw_bound.cu:51.*long_scoreboard 85.7%" ||
  fail "hot line 51: $(grep -A4 'hot_loop_kernel' "$dir/report.txt")"
"$GPUPERF" report "$dir/lines" --json -o "$dir/report.json"
python3 - "$dir/report.json" <<'PY' || fail "JSON hot lines"
import json, sys
k = json.load(open(sys.argv[1]))["pc_sampling"][0]
loop = sum(l["samples"] for l in k["lines"] if 50 <= l["line"] <= 53)
assert k["samples"] == 1000 and loop == 950 and k["has_lines"], (k["samples"], loop)
PY

# gpuperf source: the source lines (found by name in --source-dir) with their samples.
"$GPUPERF" source "$dir/lines" hot_loop --source-dir "$SRC/tests/data/metrics" > "$dir/source.txt" 2>&1 ||
  fail "source: $(tail -2 "$dir/source.txt")"
grep -qE "^ +700 +70.0% +51 +y = y \* x \+ 0.5f;" "$dir/source.txt" ||
  fail "annotated line 51 missing: $(grep ' 51 ' "$dir/source.txt")"
"$GPUPERF" source "$dir/lines" --sass > "$dir/sass.txt" 2>&1 || fail "source --sass"
grep -q "no SASS text: nvdisasm was not found" "$dir/sass.txt" || fail "source --sass says nothing of nvdisasm"
expect_exit 3 "$GPUPERF" source "$dir/lines" no_such_kernel

# The flame graph above the kernel: lines, then stalls, splitting the kernel's GPU time.
"$GPUPERF" flamegraph --pc-frames --folded -o "$dir/pc.folded" "$dir/lines" 2>/dev/null ||
  fail "flamegraph --pc-frames"
grep -q "hot_loop_kernel;\[line\] hw_bound.cu:51;\[stall\] long_scoreboard " "$dir/pc.folded" ||
  fail "no line and stall frames: $(head -3 "$dir/pc.folded")"
python3 - "$dir/pc.folded" <<'PY' || fail "the pc frames do not add up to the kernel's time"
import sys
parts = [l.rsplit(" ", 1) for l in open(sys.argv[1]).read().splitlines()]
total = sum(int(w) for s, w in parts if "hot_loop_kernel" in s)
line51 = sum(int(w) for s, w in parts if "hw_bound.cu:51;" in s)
assert total > 0 and abs(line51 / total - 0.7) < 0.01, (line51, total)
PY
"$GPUPERF" flamegraph --pc-frames -o "$dir/pc.svg" "$dir/lines" 2>/dev/null || fail "flamegraph --pc-frames SVG"
grep -q "stall reason" "$dir/pc.svg" || fail "the SVG legend lacks the stall frames"
"$GPUPERF" record -o "$dir/nopc" --inject-lib "$lib" -- "$app" basic > /dev/null 2>&1
expect_stderr_contains "has no PC samples" "$GPUPERF" flamegraph --pc-frames --folded "$dir/nopc"

# A cubin without a line table: offsets only, and one line saying how to get lines.
python3 - "$cubin" "$dir/nolines.cubin" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
i = data.find(b".debug_line\0")
data[i + 1] = ord("X")
open(sys.argv[2], "wb").write(data)
PY
record nolines "$dir/nolines.cubin"
grep -q "has no line information.*nvcc -lineinfo" "$dir/nolines.err" || fail "no -lineinfo line: $(grep gpuperf "$dir/nolines.err")"
"$GPUPERF" report "$dir/nolines" > "$dir/nolines.txt"
grep -q "built without -lineinfo" "$dir/nolines.txt" && grep -q "+0x${in51#0x}" "$dir/nolines.txt" ||
  fail "report without lines: $(grep -A4 hot_loop "$dir/nolines.txt")"

# A failing PC sampling API: one line with the fix; the kernels are still recorded.
record denied "$cubin" FAKE_CUPTI_FAIL=cuptiPCSamplingEnable=35
[[ $(grep -c "PC sampling unavailable" "$dir/denied.err") -eq 1 ]] &&
  grep "PC sampling unavailable" "$dir/denied.err" | grep -q "NVreg_RestrictProfilingToAdminUsers=0" ||
  fail "denied: $(grep -i 'pc sampling' "$dir/denied.err")"
[[ $("$GPUPERF" dump "$dir/denied" | grep -c '^kernel ') -eq 2 ]] || fail "denied: kernels not recorded"
finish
