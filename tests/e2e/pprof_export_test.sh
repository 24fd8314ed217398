#!/usr/bin/env bash
# gpuperf export --format pprof end to end: what `go tool pprof` shows of the real H100
# fixtures agrees with `gpuperf report`, protoc decodes the profile against our copy of the
# format's schema, and empty or stack-less traces still give valid profiles.
source "$(dirname "$0")/lib.sh"
command -v go >/dev/null || { echo "skip: go (golang-go) is not installed"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
export HOME=$dir  # go keeps a cache under $HOME; never touch the user's

# Kernel name -> GPU ns and calls from the report; from pprof's top table of the leaves.
report_kernels() {
  "$GPUPERF" report "$1" --format json --sections kernels | python3 -c '
import json, sys, collections
totals, calls = collections.Counter(), collections.Counter()
for k in json.load(sys.stdin)["kernels"]:
    totals[k["short_name"]] += k["total_ns"]
    calls[k["short_name"]] += k["count"]
for name, ns in totals.most_common():
    print(f"{name}\t{ns}\t{calls[name]}")'
}
pprof_kernels() {  # PROFILE: the [gpu] leaves (kernels only) with flat ns and flat count
  local ns counts
  ns=$(go tool pprof -top -nodecount=1000 -nodefraction=0 -unit=ns -sample_index=gpu_time "$1" 2>/dev/null)
  counts=$(go tool pprof -top -nodecount=1000 -nodefraction=0 -sample_index=launches "$1" 2>/dev/null)
  python3 - "$ns" "$counts" <<'PY'
import re, sys
def flat(text, unit):
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*([0-9.]+)" + unit + r"?\s+\S+\s+\S+\s+\S+\s+\S+\s+\[gpu\] (.*)$", line)
        if m and not m.group(2).startswith(("memcpy", "memset")):
            out[m.group(2)] = int(float(m.group(1)))
    return out
ns, counts = flat(sys.argv[1], "ns"), flat(sys.argv[2], "")
for name, value in sorted(ns.items(), key=lambda kv: -kv[1]):
    print(f"{name}\t{value}\t{counts.get(name, 0)}")
PY
}

for fixture in pytorch_transformer mock_transformer cublas_gemm cuda_graph; do
  trace=$(ls "$SRC"/tests/data/h100/$fixture/*.gpt)
  expect_exit 0 "$GPUPERF" export "$trace" -o "$dir/$fixture.pb.gz"
  report_kernels "$trace" > "$dir/$fixture.report.all" && head -5 "$dir/$fixture.report.all" > "$dir/$fixture.report"
  pprof_kernels "$dir/$fixture.pb.gz" > "$dir/$fixture.pprof.all" && head -5 "$dir/$fixture.pprof.all" > "$dir/$fixture.pprof"
  [[ -s $dir/$fixture.report ]] || fail "$fixture: the report lists no kernels"
  diff "$dir/$fixture.report" "$dir/$fixture.pprof" > "$dir/$fixture.diff" \
    || fail "$fixture: go tool pprof's top kernels differ from gpuperf report: $(cat "$dir/$fixture.diff")"
  # Every sample has a stack; -traces and -raw read the whole profile.
  go tool pprof -traces "$dir/$fixture.pb.gz" > "$dir/$fixture.traces" 2>&1 \
    || fail "$fixture: go tool pprof -traces failed: $(tail -2 "$dir/$fixture.traces")"
  go tool pprof -raw "$dir/$fixture.pb.gz" > "$dir/$fixture.raw" 2>&1 \
    || fail "$fixture: go tool pprof -raw failed"
  grep -q "gpu_time/nanoseconds\[dflt\] launches/count cpu_launch_time/nanoseconds" "$dir/$fixture.raw" \
    || fail "$fixture: -raw does not show the three sample types"
done

# The mock transformer's launches come from main through named functions, with lines.
grep -q 'cudaLaunchKernel' "$dir/mock_transformer.traces" || fail "no launch API frame"
grep -Eq '^ +[0-9.]+[mu]?s +\[gpu\] matmul_kernel$' "$dir/mock_transformer.traces" \
  || fail "matmul_kernel is not a leaf of a trace"
# Inlined frames keep their own line: pprof marks them.
grep -q '(inline)' "$dir/mock_transformer.traces" || fail "no inlined frame in the traces"
# Real mappings: the example binary with its build id.
grep -q 'Build ID: [0-9a-f]\{40\}' "$dir/mock_transformer.traces" || fail "no build id"
# Labels.
grep -q 'device:  0' "$dir/mock_transformer.traces" || fail "no device label"

# protoc decodes it against tests/proto/profile.proto (written from the public schema).
if command -v protoc >/dev/null; then
  zcat "$dir/mock_transformer.pb.gz" | protoc --decode=perftools.profiles.Profile \
    -I "$SRC/tests/proto" "$SRC/tests/proto/profile.proto" > "$dir/decoded.txt" \
    || fail "protoc cannot decode the profile"
  [[ $(grep -m1 'string_table' "$dir/decoded.txt") == 'string_table: ""' ]] \
    || fail "string_table[0] is not empty"
  grep -q 'has_inline_frames: true' "$dir/decoded.txt" || fail "mappings do not say they are symbolized"
fi

# Format from the name or --format; default name next to the trace; deterministic bytes.
trace=$(ls "$SRC"/tests/data/h100/vector_add/*.gpt)
cp "$trace" "$dir/va.gpt"
expect_exit 0 "$GPUPERF" export "$dir/va.gpt" --format pprof
[[ -s $dir/va.pb.gz ]] || fail "--format pprof did not default to va.pb.gz"
expect_exit 0 "$GPUPERF" export "$dir/va.gpt" -o "$dir/va.pprof"
cmp -s "$dir/va.pb.gz" "$dir/va.pprof" || fail ".pprof and .pb.gz differ, or the export is not deterministic"
expect_output_contains "samples" "$GPUPERF" export "$dir/va.gpt" -o "$dir/again.pb.gz"

# An empty trace (a process that launched nothing) and a trace without stacks.
"$SYNTH" -o "$dir/empty.gpt" --kernels 0 >/dev/null || fail "synth failed"
expect_exit 0 "$GPUPERF" export "$dir/empty.gpt" -o "$dir/empty.pb.gz"
go tool pprof -top "$dir/empty.pb.gz" > "$dir/empty.top" 2>&1 || fail "empty profile does not open"
"$SYNTH" -o "$dir/many.gpt" --kernels 300 >/dev/null || fail "synth failed"
expect_exit 0 "$GPUPERF" export "$dir/many.gpt" -o "$dir/many.pb.gz"
go tool pprof -top "$dir/many.pb.gz" > "$dir/many.top" 2>&1 || fail "synthetic profile does not open"

# A recording made with --no-stacks (the real injection library under the fake libcupti):
# every kernel is there, under [unknown launch], with its launch's CPU time.
lib=$GPUPERF_BINARY_DIR/src/inject/libgpuperf_inject.so
app=$GPUPERF_BINARY_DIR/tests/fakes/fake_cuda_app
if [[ -x $app && -f $lib ]]; then
  "$GPUPERF" record -o "$dir/nostacks" --inject-lib "$lib" --no-stacks -- "$app" basic \
    > "$dir/nostacks.out" 2>&1 || fail "record --no-stacks failed: $(tail -2 "$dir/nostacks.out")"
  expect_exit 0 "$GPUPERF" export "$dir/nostacks" -o "$dir/nostacks.pb.gz"
  kernels=$("$GPUPERF" dump "$dir/nostacks" | grep -c '^kernel ')
  launches=$(go tool pprof -raw "$dir/nostacks.pb.gz" | python3 -c '
import re, sys
total = 0
for line in sys.stdin:
    m = re.match(r"\s+(\d+)\s+(\d+)\s+(\d+):", line)
    if m: total += int(m.group(2))
print(total)')
  [[ $kernels -gt 0 && $launches -ge $kernels ]] || fail "--no-stacks: $launches launches in the profile, $kernels kernels in the trace"
  go tool pprof -traces "$dir/nostacks.pb.gz" | grep -q '\[unknown launch\]' || fail "--no-stacks: no [unknown launch]"
else
  echo "note: no injection library or fake app in this build: --no-stacks recording not checked"
fi

# Bad input: one message, non-zero exit, nothing left behind.
echo "hello" > "$dir/text.gpt"
expect_exit 3 "$GPUPERF" export "$dir/text.gpt" -o "$dir/bad.pb.gz"
[[ ! -e $dir/bad.pb.gz ]] || fail "a failed export left bad.pb.gz behind"

finish
