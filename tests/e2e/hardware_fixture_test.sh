#!/usr/bin/env bash
# Traces of `gpuperf metrics` and `gpuperf record --pc-sampling` recorded on a GPU
# (tests/data/metrics/<gpu>/{kernel,nvtx,pc}/, copied from the GPU check's
# $OUT/metrics/fixtures.tar.gz, each with its PROVENANCE): the bounds of examples/hw_bound.cu's
# kernels, the hot loop's share of the PC samples, and the report's hardware section and the
# --pc-frames flame graph against goldens (tests/golden/metrics/<gpu>_*; GPUPERF_BLESS=1
# rewrites them). Skipped until such fixtures are added.
source "$(dirname "$0")/lib.sh"
shopt -s nullglob
fixtures=("$SRC"/tests/data/metrics/*/kernel)
[[ ${#fixtures[@]} -gt 0 ]] || { echo "skip: no GPU fixtures under tests/data/metrics/*/kernel"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

# golden NAME FILE: FILE equals tests/golden/metrics/NAME (or becomes it with GPUPERF_BLESS=1).
golden() {
  local want=$SRC/tests/golden/metrics/$1
  if [[ ${GPUPERF_BLESS:-0} == 1 ]]; then
    mkdir -p "$(dirname "$want")"; cp "$2" "$want"; return
  fi
  [[ -f $want ]] || { fail "no golden $want (GPUPERF_BLESS=1 writes it)"; return; }
  diff -q "$want" "$2" >/dev/null || fail "$1 differs from its golden: $(diff "$want" "$2" | head -6)"
}
bound() { python3 -c "import json,sys; print(next((r['bound'] for r in json.load(open(sys.argv[1])).get('hardware', []) if sys.argv[2] in r['name']), 'none'))" "$1" "$2"; }

for kernel_dir in "${fixtures[@]}"; do
  base=$(dirname "$kernel_dir")
  gpu=$(basename "$base")
  "$GPUPERF" report "$kernel_dir" --sections hardware --json -o "$dir/$gpu-kernel.json" || fail "$gpu: report"
  for pair in copy_kernel:memory fma_kernel:compute latency_kernel:latency; do
    got=$(bound "$dir/$gpu-kernel.json" "${pair%%:*}")
    [[ $got == "${pair#*:}" ]] || fail "$gpu: ${pair%%:*} is $got bound, want ${pair#*:}"
  done
  "$GPUPERF" report "$kernel_dir" --sections hardware > "$dir/$gpu-kernel.txt" 2>&1
  golden "${gpu}_kernel_report.txt" "$dir/$gpu-kernel.txt"
  if [[ -d $base/nvtx ]]; then
    "$GPUPERF" report "$base/nvtx" --sections hardware --json -o "$dir/$gpu-nvtx.json" || fail "$gpu: nvtx report"
    [[ $(bound "$dir/$gpu-nvtx.json" copy) == memory ]] || fail "$gpu: NVTX range copy is not memory bound"
  fi
  if [[ -d $base/pc ]]; then
    "$GPUPERF" report "$base/pc" --sections hardware --json -o "$dir/$gpu-pc.json" || fail "$gpu: pc report"
    python3 - "$dir/$gpu-pc.json" "$SRC/examples/hw_bound.cu" <<'PY' || fail "$gpu: hot loop share"
import json, sys
k = next(k for k in json.load(open(sys.argv[1]))["pc_sampling"] if "hot_loop" in k["name"])
lines = open(sys.argv[2]).read().splitlines()
begin = next(i + 1 for i, l in enumerate(lines) if "hot loop begins" in l)
end = next(i + 1 for i, l in enumerate(lines) if "hot loop ends" in l)
share = sum(l["samples"] for l in k["lines"] if begin <= l["line"] <= end) / k["samples"]
assert share >= 0.8, share
PY
    "$GPUPERF" flamegraph --pc-frames --folded "$base/pc" -o "$dir/$gpu-pc.folded" 2>/dev/null || fail "$gpu: flamegraph"
    golden "${gpu}_pc_frames.folded" "$dir/$gpu-pc.folded"
  fi
done
finish
