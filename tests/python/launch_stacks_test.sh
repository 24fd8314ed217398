#!/usr/bin/env bash
# Launch stacks with Python frames, end to end, with a real CPython: launch_stacks.py calls
# main -> Model.forward -> helper, which launches through the _gpuperf_fakecuda extension
# (GIL released) and the fake libcupti, under `gpuperf record` with the injection library.
# The flame graph, the report and the timeline must show exactly those functions with their
# lines, directly above the extension's native frame, and none of the interpreter's frames
# unless --python-internals asks for them. The native stack ends at the innermost eval-loop
# frame unless --full-native-stacks keeps it whole. Threads without Python get native frames only;
# a thread named like PyTorch's autograd workers gets the [autograd backward] root. Launches
# repeated from two lines through the same native frames (launch_memo.py) keep their own
# lines when the thread's stack memo answers them, and the memo's answers equal a fresh
# unwind's in verify mode.
#
# usage: launch_stacks_test.sh PYTHON EXTENSION_DIR
source "$GPUPERF_SOURCE_DIR/tests/e2e/lib.sh"
python=${1:?PYTHON}
ext=${2:?EXTENSION_DIR}
lib=$GPUPERF_BINARY_DIR/src/inject/libgpuperf_inject.so
script=$SRC/tests/python/launch_stacks.py
[[ -x $python && -f $lib && -d $ext ]] || { echo "skip: no $python, injection library or extension"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

# "launch_stacks.py:N" for the line marked "# line:NAME" in the script.
at() { echo "launch_stacks.py:$(grep -n "# line:$1\$" "$script" | cut -d: -f1)"; }
py() { echo "$1 ($(at "$2"))"; }
stat_value() { "$GPUPERF" dump "$1" 2>/dev/null | grep "# $2\$" | tail -1 | sed 's/.*value=\([0-9]*\).*/\1/'; }

minor=$("$python" -c 'import sys; print(sys.version_info[1])')
forward=Model.forward init=Model.__init__
[[ $minor -lt 11 ]] && forward=forward init=__init__  # co_name: 3.10 has no qualified names

"$GPUPERF" record -o "$dir/rec" --flush-period 10 --inject-lib "$lib" -- "$python" "$script" "$ext" \
  > "$dir/out" 2> "$dir/err" || { cat "$dir/err"; fail "record failed"; finish; }

# --- the flame graph, default: the Python frames replace the interpreter's ---
"$GPUPERF" flamegraph --folded -o "$dir/default.folded" "$dir/rec" 2> "$dir/flame.err" || fail "flamegraph"
grep -q "7/7 kernels joined" "$dir/flame.err" || fail "not every kernel joined: $(cat "$dir/flame.err")"
want="$(py '<module>' module);$(py main main);$(py "$forward" forward);$(py helper helper);(anonymous namespace)::Launch;(anonymous namespace)::FakeCudaLaunchKernel;cudaLaunchKernel;[GPU0]"
for kernel in matmul softmax; do
  line=$(grep "\[GPU0\] $kernel " "$dir/default.folded")
  # Nothing above <module>: the native stack ended at the innermost eval frame.
  [[ $line == "$want $kernel "* ]] || fail "$kernel: want $want $kernel, got: $line"
done
grep -q '_PyEval_EvalFrameDefault\|python3\.[0-9]*+0x' "$dir/default.folded" && fail "interpreter frames in the default flame graph"
line=$(grep '\[GPU0\] later ' "$dir/default.folded")
[[ $line == "$(py '<module>' module);$(py main later);(anonymous namespace)::Launch;"* ]] || fail "later: $line"

# --- with --python-internals the innermost eval frame is back, the Python frames it ran
# inside it; the frames outside it (start-up, the outer eval calls) were never unwound ---
"$GPUPERF" flamegraph --folded --python-internals -o "$dir/internals.folded" "$dir/rec" 2>/dev/null || fail "flamegraph --python-internals"
# (3.10 runs every Python frame in an eval call of its own, 3.11+ these four in one; the
# frames of the outer calls go outermost.)
line=$(grep '\[GPU0\] matmul ' "$dir/internals.folded")
inner_eval="_PyEval_EvalFrameDefault;$(py '<module>' module);"
[[ $minor -lt 11 ]] && inner_eval="$(py "$forward" forward);_PyEval_EvalFrameDefault;$(py helper helper);"
[[ $line == *"$inner_eval"* && $(grep -o '_PyEval_EvalFrameDefault' <<<"$line" | wc -l) -eq 1 ]] \
  || fail "--python-internals: want one eval frame, ...$inner_eval...: $line"
[[ $line != *Py_RunMain* && $line != *__libc_start* ]] || fail "--python-internals: start-up frames unwound: $line"
python_order() { tr ';' '\n' <<<"$1" | grep '\.py:' | tr '\n' ';'; }
[[ $(python_order "$line") == "$(py '<module>' module);$(py main main);$(py "$forward" forward);$(py helper helper);" ]] \
  || fail "--python-internals: the Python frames are not in order: $line"

# --- --full-native-stacks: every native frame, the eval loop right outside <module> ---
"$GPUPERF" record -o "$dir/full" --full-native-stacks --inject-lib "$lib" -- "$python" "$script" "$ext" \
  > /dev/null 2>&1 || fail "record --full-native-stacks"
"$GPUPERF" flamegraph --folded --python-internals -o "$dir/full.internals.folded" "$dir/full" 2>/dev/null || fail "flamegraph (full)"
line=$(grep '\[GPU0\] matmul ' "$dir/full.internals.folded")
[[ $line == *Py_RunMain*"_PyEval_EvalFrameDefault;$(py '<module>' module);"* ]] \
  || fail "--full-native-stacks: want the start-up frames and the eval frame outside <module>: $line"
[[ $(python_order "$line") == "$(py '<module>' module);$(py main main);$(py "$forward" forward);$(py helper helper);" ]] \
  || fail "--full-native-stacks: the Python frames are not in order: $line"
"$GPUPERF" flamegraph --folded -o "$dir/full.folded" "$dir/full" 2>/dev/null || fail "flamegraph (full, default)"
line=$(grep '\[GPU0\] matmul ' "$dir/full.folded")
[[ $line == *";$want matmul "* ]] || fail "--full-native-stacks, default graph: want ...;$want matmul, got: $line"
outer=${line%%;<module> *}
[[ $outer != *python* && $outer != *Py* ]] || fail "--full-native-stacks: interpreter frames above <module>: $outer"

# --- threads without Python: native frames only; the autograd-named one labelled ---
line=$(grep '\[GPU0\] nativeKer ' "$dir/default.folded")
[[ $line == *"(anonymous namespace)::FakeCudaLaunchKernel;cudaLaunchKernel;[GPU0] nativeKer "* && $line != *".py:"* && $line != "[autograd"* ]] \
  || fail "native thread: $line"
line=$(grep '\[GPU0\] backward ' "$dir/default.folded")
[[ $line == "[autograd backward];"*"FakeCudaLaunchKernel;cudaLaunchKernel;[GPU0] backward "* && $line != *".py:"* ]] \
  || fail "autograd thread: $line"
[[ $(stat_value "$dir/rec" python_no_thread_state) -eq 2 ]] || fail "python_no_thread_state: $(stat_value "$dir/rec" python_no_thread_state), want 2"
[[ $(stat_value "$dir/rec" python_codes) -ge 5 ]] || fail "python_codes: $(stat_value "$dir/rec" python_codes), want >= 5"
[[ -z $(stat_value "$dir/rec" python_intern_failed) ]] || fail "python frames without names"

# --- the report's stack listing: the leak's allocating stack, innermost first ---
"$GPUPERF" report "$dir/rec" > "$dir/report" 2>&1 || fail "report"
grep -A6 'Still allocated at exit' "$dir/report" | sed 's/^ *//' > "$dir/leak"
grep -A3 '^(anonymous namespace)::Malloc' "$dir/leak" | tail -3 > "$dir/leak.python"
printf '%s\n' "$(py "$init" init)" "$(py main construct)" "$(py '<module>' module)" \
  | diff - "$dir/leak.python" > /dev/null || fail "report's leak stack: $(cat "$dir/leak")"
grep -q "Python frames: 5 code objects copied; 2 launches from threads without Python" "$dir/report" \
  || fail "report's overhead section: $(grep -A8 'Profiler overhead' "$dir/report")"
"$GPUPERF" report --python-internals "$dir/rec" 2>&1 | grep -A6 'Still allocated at exit' | grep -q '_PyObject_MakeTpCall\|python3\.[0-9]*+0x' \
  || fail "report --python-internals: no interpreter frames in the leak stack"

# --- the timeline: the launch's stack on its API slice ---
"$GPUPERF" export -o "$dir/timeline.json" "$dir/rec" > /dev/null || fail "export"
"$python" "$SRC/tests/python/timeline_order.py" "$dir/timeline.json" "$(py helper helper)" "$(py main main)" \
  > /dev/null || fail "timeline stack: no launch with $(py helper helper) inside $(py main main)"

# --- the stack memo: two lines, the same native frames; each kernel keeps its own line ---
memo_script=$SRC/tests/python/launch_memo.py
memo_line() { echo "launch ($(basename "$memo_script"):$(grep -n "# line:$1\$" "$memo_script" | cut -d: -f1))"; }
for verify in 0 1; do
  GPUPERF_UNWIND_VERIFY=$verify "$GPUPERF" record -o "$dir/memo$verify" --inject-lib "$lib" -- \
    "$python" "$memo_script" "$ext" > "$dir/memo$verify.out" 2>&1 || fail "record launch_memo.py (verify $verify)"
  "$GPUPERF" flamegraph --folded -o "$dir/memo$verify.folded" "$dir/memo$verify" 2>/dev/null ||
    fail "flamegraph (memo, verify $verify)"
  for kernel in even odd; do
    # One stack for all of a kernel's launches, with its own line.
    stacks=$(grep -c "\[GPU0\] $kernel " "$dir/memo$verify.folded")
    line=$(grep "\[GPU0\] $kernel " "$dir/memo$verify.folded")
    [[ $stacks -eq 1 && $line == *"$(memo_line "$kernel");"* ]] ||
      fail "memo (verify $verify): $kernel launches under $stacks stacks: $line"
  done
done
hits=$(stat_value "$dir/memo0" stack_memo_hits)
launches=$(grep -o '[0-9]* launches' "$dir/memo0.out" | cut -d' ' -f1)
[[ ${hits:-0} -gt 0 ]] || fail "stack memo: no hit in ${launches:-?} launches"
echo "stack memo: ${hits:-0} hits in ${launches:-?} launches, $(stat_value "$dir/memo0" stack_memo_entries) entries"
checked=$(stat_value "$dir/memo1" stack_memo_checked)
[[ ${checked:-0} -gt 0 && -z $(stat_value "$dir/memo1" stack_memo_disagreements) ]] ||
  fail "stack memo, verify mode: ${checked:-0} hits checked, $(stat_value "$dir/memo1" stack_memo_disagreements) differ"

# --- --no-python-stacks: native frames, interpreter included, no Python records ---
"$GPUPERF" record -o "$dir/off" --no-python-stacks --inject-lib "$lib" -- "$python" "$script" "$ext" \
  > /dev/null 2>&1 || fail "record --no-python-stacks"
"$GPUPERF" flamegraph --folded -o "$dir/off.folded" "$dir/off" 2>/dev/null || fail "flamegraph (off)"
grep -q '\.py:' "$dir/off.folded" && fail "--no-python-stacks: Python frames recorded"
grep -q '(anonymous namespace)::Launch;' "$dir/off.folded" || fail "--no-python-stacks: native stacks missing"
"$GPUPERF" dump "$dir/off" | grep -q '^python_code ' && fail "--no-python-stacks: code records written"
# --- bench/python/launch_cost.py runs here (its numbers are for people, not for this test) ---
"$GPUPERF" record -o "$dir/cost" --quiet --inject-lib "$lib" -- "$python" "$SRC/bench/python/launch_cost.py" \
  "$ext" --depth 12 --rounds 2 --batch 300 > "$dir/cost.out" 2>&1 || fail "launch_cost.py: $(tail -3 "$dir/cost.out")"
[[ $(grep -cE '^  (full|nomemo|native|nostacks|none) +[0-9]+ ' "$dir/cost.out") -eq 5 ]] ||
  fail "launch_cost.py did not print its five levels: $(cat "$dir/cost.out")"
finish
