#!/usr/bin/env bash
# A PyTorch trace recorded on the H100 with Python frames (tests/data/h100/pytorch_tiny/,
# made by tests/gpu/checks/pytorch_extra.sh; see its PROVENANCE), rendered by every command:
# every kernel joined to its launch stack; the recorded script's own functions with
# file:line, a forward among them; no interpreter frames in the default flame graph, and the
# eval loop back with --python-internals; the report's stack listings and overhead section
# with Python frames; the SVG and the timeline. Skips (77) while the fixture is absent.
# GPUPERF_PYTORCH_FIXTURE=DIR renders another trace of a Python program the same way.
source "$(dirname "$0")/lib.sh"
fixture=${GPUPERF_PYTORCH_FIXTURE:-$SRC/tests/data/h100/pytorch_tiny}
if ! compgen -G "$fixture/*.gpt" > /dev/null || [[ ! -f $fixture/PROVENANCE ]]; then
  echo "skip: no PyTorch fixture at $fixture (tests/gpu/checks/pytorch_extra.sh makes it)"
  exit 77
fi
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
# The recorded script, from the PROVENANCE's command line.
script=$(sed -n 's/^command: .* \([^ ]*\.py\)\( .*\)\{0,1\}$/\1/p' "$fixture/PROVENANCE")
script=$(basename "$script")
[[ -n $script ]] || fail "PROVENANCE names no Python script: $(grep '^command:' "$fixture/PROVENANCE")"
# "FUNCTION (SCRIPT:LINE)" frames of the recorded script, one per line.
own_frames() { grep -o "[^;]* ($script:[0-9]*)" "$1" | sort -u; }

# --- the flame graph -------------------------------------------------------------------------
"$GPUPERF" flamegraph --folded -o "$dir/default.folded" "$fixture" 2> "$dir/flame.err" ||
  fail "flamegraph: $(cat "$dir/flame.err")"
joined=$(grep -o '[0-9,]*/[0-9,]* kernels joined' "$dir/flame.err" | tr -d ,)
[[ -n $joined && ${joined%%/*} == $(cut -d/ -f2 <<<"${joined%% *}") ]] ||
  fail "not every kernel joined: ${joined:-$(cat "$dir/flame.err")}"
own_frames "$dir/default.folded" > "$dir/own"
[[ $(wc -l < "$dir/own") -ge 3 ]] || fail "fewer than 3 frames of $script with file:line: $(cat "$dir/own")"
grep -q 'forward (' "$dir/own" || fail "no forward function of $script: $(cat "$dir/own")"
# Each kernel sits under the script's frames: the heaviest stack has them.
heaviest=$(awk '{print $NF "\t" $0}' "$dir/default.folded" | sort -t$'\t' -k1,1nr | head -1 | cut -f2-)
[[ $heaviest == *"($script:"* ]] || fail "the heaviest stack has no frame of $script: $heaviest"
grep -q '_PyEval_EvalFrameDefault\|python3\.[0-9]*+0x\|libpython[^;]*+0x' "$dir/default.folded" &&
  fail "interpreter frames in the default flame graph: $(grep -m1 -o '[^;]*_PyEval[^;]*\|[^;]*python3\.[0-9]*+0x[^;]*' "$dir/default.folded")"

"$GPUPERF" flamegraph --folded --python-internals -o "$dir/internals.folded" "$fixture" 2>/dev/null ||
  fail "flamegraph --python-internals"
grep -q '_PyEval_EvalFrameDefault' "$dir/internals.folded" ||
  fail "--python-internals shows no _PyEval_EvalFrameDefault"
own_frames "$dir/internals.folded" | diff -q - "$dir/own" > /dev/null ||
  fail "--python-internals changed the script's frames"

"$GPUPERF" flamegraph -o "$dir/flame.svg" "$fixture" > /dev/null 2>&1 || fail "flamegraph SVG"
grep -q "($script:[0-9]*)" "$dir/flame.svg" || fail "the SVG shows no frame of $script"

# --- the report: stack listings and the overhead section ---------------------------------------
# The stacks a report lists are its insights' causes (this run's syncs carry no stack).
"$GPUPERF" report --insights "$fixture" > "$dir/report" 2>&1 || fail "report"
grep -q '([A-Za-z0-9_]*\.py:[0-9]*)' "$dir/report" || fail "the report lists no Python frame with file:line"
grep -q '_PyEval_EvalFrameDefault' "$dir/report" && fail "the report lists interpreter frames"
grep -q 'Python frames: [0-9,]* code objects copied' "$dir/report" ||
  fail "the report's overhead section has no Python frames line"

# --- the timeline ---------------------------------------------------------------------------------
expect_exit 0 "$GPUPERF" export "$fixture" -o "$dir/timeline.json"
grep -q "$script:[0-9]" "$dir/timeline.json" || fail "the timeline's stacks show no frame of $script"
expect_exit 0 "$GPUPERF" export "$fixture" -o "$dir/timeline.perfetto-trace"
finish
