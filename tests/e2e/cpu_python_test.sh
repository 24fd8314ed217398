#!/usr/bin/env bash
# Python frames in the eBPF CPU profiler's samples (docs/cpu-profiling.md): a pure-Python
# program (tests/cpu/cpu_split.py, no CUDA) spends ~70% of its CPU time in hot() and ~30%
# in warm(), timed by itself. Recorded with `record --cpu`, the folded CPU stacks must show
# <module> -> main -> hot/warm -> spin as Python frames with their file and line, the
# interpreter's eval loop merged away (under 5% of samples keep it), and hot's share within
# 10 points of the truth; the
# report names them too. With the interpreter's layout refused (a version we do not know),
# one note says so, the samples stay (native frames only) and the refusal is counted.
# Needs root, BPF and a CPython 3.10 to 3.14 as python3: skipped without.
source "$(dirname "$0")/lib.sh"
require_cpu_python
script=$SRC/tests/cpu/cpu_split.py
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

"$GPUPERF" record -o "$dir/rec" --inject-lib "$lib" --cpu --freq 499 -- "$py" "$script" 2 \
  > "$dir/out" 2> "$dir/err"
rc=$?
if grep -qE "built without its eBPF CPU profiler|needs root|loading the BPF programs|attaching" "$dir/err"; then
  echo "SKIP: BPF is not available here: $(grep gpuperf: "$dir/err" | head -1)"; exit 77
fi
[[ $rc -eq 0 ]] || fail "record exited $rc: $(tail -3 "$dir/err")"
grep -q "no Python frames" "$dir/err" && fail "the interpreter was refused: $(grep note "$dir/err")"
said=$(grep '^cpu_split.py:' "$dir/out")
read -r hot_truth warm_truth <<< "${said#cpu_split.py: }"
[[ -n ${hot_truth:-} && -n ${warm_truth:-} ]] || fail "cpu_split.py said: $said"

"$GPUPERF" flamegraph --folded --weight cpu -o "$dir/cpu.folded" "$dir/rec" 2>/dev/null ||
  fail "flamegraph --weight cpu failed"
hot_line=$(grep -n "line: hot calls spin" "$script" | cut -d: -f1)
warm_line=$(grep -n "line: warm calls spin" "$script" | cut -d: -f1)
# Python frames, outermost first, with file:line, exactly as launch stacks show them.
chain='<module> (cpu_split.py:[0-9]*);main (cpu_split.py:[0-9]*)'
sum() { grep -- "$1" "$2" | awk '{s += $NF} END {printf "%d\n", s}'; }
hot_ns=$(sum "$chain;hot (cpu_split.py:$hot_line);spin (cpu_split.py:[0-9]*);" "$dir/cpu.folded")
warm_ns=$(sum "$chain;warm (cpu_split.py:$warm_line);spin (cpu_split.py:[0-9]*);" "$dir/cpu.folded")
all_ns=$(sum '' "$dir/cpu.folded")
python3 - "$hot_ns" "$warm_ns" "$all_ns" "$hot_truth" "$warm_truth" <<'PY' || fail "split: see above"
import sys
hot, warm, total, hot_truth, warm_truth = map(int, sys.argv[1:])
got = 100.0 * hot / max(hot + warm, 1)
truth = 100.0 * hot_truth / (hot_truth + warm_truth)
print("Python frames: hot %.1f%% of hot+warm (truth %.1f%%); hot+warm %.0f%% of all samples"
      % (got, truth, 100.0 * (hot + warm) / max(total, 1)))
ok = abs(got - truth) <= 10 and (hot + warm) >= 0.5 * (hot_truth + warm_truth)
sys.exit(0 if ok else 1)
PY
# The eval loop is merged away wherever Python frames were read. Samples without them keep
# it (those taken before the recorder had found the interpreter, just after the exec, or
# in the interpreter's own start and end): a sliver at most.
grep '_PyEval_EvalFrameDefault' "$dir/cpu.folded" | grep -q ' (cpu_split.py:' &&
  fail "the eval loop beside Python frames: $(grep -m1 _PyEval_EvalFrameDefault "$dir/cpu.folded")"
eval_ns=$(sum '_PyEval_EvalFrameDefault' "$dir/cpu.folded")
(( eval_ns * 20 <= all_ns )) || fail "the eval loop holds $eval_ns of $all_ns ns of samples"
"$GPUPERF" report --sections cpu "$dir/rec" > "$dir/report.txt" 2>&1 || fail "report failed"
grep -q "spin (cpu_split.py:[0-9]*)" "$dir/report.txt" || fail "report: spin (cpu_split.py:N) not among the functions"

# Other interpreters under ~/.pyenv, when present (as tests/python does): each supported
# minor gets the split checked too.
for other in "$HOME"/.pyenv/versions/3.1[0-4]*/bin/python3; do
  [[ -x $other && $other != "$py" ]] || continue
  name=$(basename "$(dirname "$(dirname "$other")")")
  "$GPUPERF" record -o "$dir/$name" --inject-lib "$lib" --cpu --freq 499 -- "$other" "$script" 1 \
    > "$dir/$name.out" 2> "$dir/$name.err" || { fail "$name: record exited $?"; continue; }
  "$GPUPERF" flamegraph --folded --weight cpu -o "$dir/$name.folded" "$dir/$name" 2>/dev/null
  read -r h w <<< "$(sed -n 's/^cpu_split.py: //p' "$dir/$name.out")"
  python3 - "$name" "$(sum "$chain;hot (cpu_split.py:$hot_line);spin" "$dir/$name.folded")" \
    "$(sum "$chain;warm (cpu_split.py:$warm_line);spin" "$dir/$name.folded")" "${h:-0}" "${w:-0}" <<'PY' ||
import sys
name, hot, warm, hot_truth, warm_truth = sys.argv[1], *map(int, sys.argv[2:])
got = 100.0 * hot / max(hot + warm, 1)
truth = 100.0 * hot_truth / max(hot_truth + warm_truth, 1)
print("%s: hot %.1f%% of hot+warm (truth %.1f%%)" % (name, got, truth))
sys.exit(0 if abs(got - truth) <= 10 and hot + warm >= 0.5 * (hot_truth + warm_truth) else 1)
PY
    fail "$name: split: see above"
done

# A layout we do not know: a note, native frames only, the refusal counted, no crash.
GPUPERF_CPU_PYTHON_VERSION=3.99 "$GPUPERF" record -o "$dir/refused" --inject-lib "$lib" --cpu \
  --freq 499 -- "$py" "$script" 0.5 > /dev/null 2> "$dir/refused.err" ||
  fail "record with an unknown layout exited $?: $(tail -3 "$dir/refused.err")"
[[ $(grep -c "CPython 3.99: .*its CPU samples have no Python frames" "$dir/refused.err") -eq 1 ]] ||
  fail "no single note about the refused layout: $(cat "$dir/refused.err")"
"$GPUPERF" flamegraph --folded --weight cpu -o "$dir/refused.folded" "$dir/refused" 2>/dev/null ||
  fail "flamegraph of the refused recording failed"
[[ $(sum '' "$dir/refused.folded") -gt 0 ]] || fail "no CPU samples with the layout refused"
grep -q 'cpu_split.py' "$dir/refused.folded" && fail "Python frames despite the refused layout"
"$GPUPERF" report "$dir/refused" 2>&1 | grep -q "cpu_python_refused" ||
  fail "the refusal is not counted in the report"
finish
