#!/usr/bin/env bash
# examples/pytorch_transformer.py on the CPU (its --device cpu testing mode): inference and
# training run and print the summary line, bad arguments exit 2, the loss checks reject bad
# losses, and the module is importable with run(steps, train) for the torch.profiler wrapper.
# Skips (77) when no python3 with torch is installed.
source "$(dirname "$0")/lib.sh"

script=$SRC/examples/pytorch_transformer.py
python=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import torch' 2>/dev/null; then
    python=$candidate
    break
  fi
done
if [[ -z $python ]]; then
  echo "skip: no python3 with torch"
  exit 77
fi

small=(--device cpu --batch 2 --seq 16 --dim 32 --heads 4 --layers 2 --vocab 64)

out=$("$python" "$script" "${small[@]}" --steps 3 2>&1) || fail "inference run failed: $out"
last=$(tail -n 1 <<<"$out")
[[ $last == "gpuperf-example: name=pytorch_inference kernels=-1 memcpy_bytes=-1 memset_bytes=-1 nvtx_ranges=0 graph_launches=0 graph_kernels=0 wall_ms="* ]] ||
  fail "unexpected inference summary: $last"
[[ $last == *" steps=3 step_ms="* ]] || fail "summary lacks steps=3: $last"

out=$("$python" "$script" "${small[@]}" --train --steps 12 2>&1) || fail "training run failed: $out"
[[ $(tail -n 1 <<<"$out") == "gpuperf-example: name=pytorch_train "* ]] ||
  fail "unexpected training summary: $out"

expect_exit 2 "$python" "$script" --steps 0
expect_exit 2 "$python" "$script" --dim 30 --heads 4
expect_exit 2 "$python" "$script" --no-such-flag

checks=$(cd "$SRC/examples" && "$python" - <<'EOF' 2>&1
import math
import pytorch_transformer as pt

def rejects(losses):
    try:
        pt.check_losses(losses)
    except pt.WrongResult:
        return True
    return False

assert rejects([2.0, math.nan]), "a NaN loss passed"
assert rejects([2.0 + i * 0.1 for i in range(10)]), "a rising loss passed"
assert not rejects([2.0 - i * 0.1 for i in range(10)]), "a falling loss was rejected"
assert not rejects([2.0, 2.5]), "short runs are only checked for finite losses"
summary = pt.run(steps=2, train=False, batch=1, seq=8, dim=16, heads=2, layers=1, vocab=32,
                 device="cpu")
assert summary["steps"] == 2 and summary["name"] == "pytorch_inference", summary
print("checks ok")
EOF
)
[[ $checks == *"checks ok"* ]] || fail "module checks: $checks"

finish
