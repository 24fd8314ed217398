#!/usr/bin/env bash
# Launch stacks with Python frames, end to end, with a real CPython: launch_stacks.py calls
# main -> Model.forward -> helper, which launches through the _gpuperf_fakecuda extension
# (GIL released) and the fake libcupti, under `gpuperf record` with the injection library.
# The flame graph, the report and the timeline must show exactly those functions with their
# lines, directly above the extension's native frame, and none of the interpreter's frames
# unless --python-internals asks for them. Threads without Python get native frames only;
# a thread named like PyTorch's autograd workers gets the [autograd backward] root.
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
  [[ $line == *";$want $kernel "* ]] || fail "$kernel: want ...;$want $kernel, got: $line"
  # Nothing but libc's start-up frames above the module: no interpreter frames.
  outer=${line%%;<module> *}
  [[ $outer != *python* && $outer != *Py* ]] || fail "$kernel: interpreter frames above <module>: $outer"
done
grep -q '_PyEval_EvalFrameDefault\|python3\.[0-9]*+0x' "$dir/default.folded" && fail "interpreter frames in the default flame graph"
line=$(grep '\[GPU0\] later ' "$dir/default.folded")
[[ $line == *";$(py '<module>' module);$(py main later);(anonymous namespace)::Launch;"* ]] || fail "later: $line"

# --- with --python-internals the eval loop is back, the Python frames inside it ---
"$GPUPERF" flamegraph --folded --python-internals -o "$dir/internals.folded" "$dir/rec" 2>/dev/null || fail "flamegraph --python-internals"
# (3.10 runs every Python frame in an eval call of its own, 3.11+ these four in one.)
line=$(grep '\[GPU0\] matmul ' "$dir/internals.folded")
[[ $line == *"_PyEval_EvalFrameDefault;$(py '<module>' module);"* ]] \
  || fail "--python-internals: <module> is not right inside an eval frame: $line"
[[ $(tr ';' '\n' <<<"$line" | grep '\.py:' | tr '\n' ';') == "$(py '<module>' module);$(py main main);$(py "$forward" forward);$(py helper helper);" ]] \
  || fail "--python-internals: the Python frames are not in order: $line"

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

# --- the timeline: the launch's stack on its API slice ---
"$GPUPERF" export -o "$dir/timeline.json" "$dir/rec" > /dev/null || fail "export"
"$python" - "$dir/timeline.json" "$(py helper helper)" "$(py main main)" <<'EOF' || fail "timeline stack"
import json, sys
trace = json.load(open(sys.argv[1]))
frames = trace["stackFrames"]
def chain(node):
    names = []
    while node:
        names.append(frames[node]["name"])
        node = frames[node].get("parent")
    return names
stacks = [chain(str(e["sf"])) for e in trace["traceEvents"]
          if e.get("name") == "cudaLaunchKernel" and "sf" in e]
ok = any(sys.argv[2] in s and sys.argv[3] in s and s.index(sys.argv[2]) < s.index(sys.argv[3])
         for s in stacks)
print("timeline stacks:", stacks[:1])
sys.exit(0 if ok else 1)
EOF

# --- --no-python-stacks: native frames, interpreter included, no Python records ---
"$GPUPERF" record -o "$dir/off" --no-python-stacks --inject-lib "$lib" -- "$python" "$script" "$ext" \
  > /dev/null 2>&1 || fail "record --no-python-stacks"
"$GPUPERF" flamegraph --folded -o "$dir/off.folded" "$dir/off" 2>/dev/null || fail "flamegraph (off)"
grep -q '\.py:' "$dir/off.folded" && fail "--no-python-stacks: Python frames recorded"
grep -q '(anonymous namespace)::Launch;' "$dir/off.folded" || fail "--no-python-stacks: native stacks missing"
"$GPUPERF" dump "$dir/off" | grep -q '^python_code ' && fail "--no-python-stacks: code records written"
finish
