#!/usr/bin/env bash
# The eBPF CPU profiler end to end (`record --cpu --off-cpu`, docs/cpu-profiling.md), on a
# program that knows its own split (tests/cpu/cpu_split.cc): 70% of its CPU time in
# cpu_split_hot and 30% in cpu_split_warm, a sleep in cpu_split_sleep and a wait inside a
# function named cudaStreamSynchronize, each measured by the program itself. The recorded
# shares must be within 5 points of the truth and the blocked times within 5%; the report
# names the same functions; without privileges (as `nobody`) one line says what to run
# and the GPU recording goes on. Needs root and a kernel with BPF and BTF: skipped without.
source "$(dirname "$0")/lib.sh"
bin=$GPUPERF_BINARY_DIR
app=$bin/tests/cpu/cpu_split
lib=$bin/src/inject/libgpuperf_inject.so
fake_app=$bin/tests/fakes/fake_cuda_app
[[ -x $app && -f $lib ]] || { echo "SKIP: no cpu_split or injection library in this build"; exit 77; }
if [[ $(id -u) -ne 0 ]]; then echo "SKIP: the CPU profiler needs root here"; exit 77; fi
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"  # the unprivileged run below writes under it

"$GPUPERF" record -o "$dir/rec" --inject-lib "$lib" --cpu --off-cpu --freq 499 -- \
  "$app" 2000 500 300 > "$dir/out" 2> "$dir/err"
rc=$?
if grep -q "built without its eBPF CPU profiler" "$dir/err"; then
  echo "SKIP: gpuperf was built without the eBPF CPU profiler"; exit 77
fi
if grep -qE "needs root|loading the BPF programs|attaching" "$dir/err"; then
  echo "SKIP: BPF is not available here: $(grep gpuperf: "$dir/err" | head -1)"; exit 77
fi
[[ $rc -eq 0 ]] || fail "record exited $rc: $(tail -3 "$dir/err")"
grep -q "^gpuperf: CPU: " "$dir/err" || fail "no CPU summary line: $(cat "$dir/err")"
ls "$dir"/rec/cpu.*.gpt >/dev/null 2>&1 || fail "no cpu.<pid>.gpt in the recording"
said=$(grep '^cpu_split:' "$dir/out")
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<< "$said"; }
hot=$(field hot_ns); warm=$(field warm_ns); slept=$(field sleep_ns); synced=$(field sync_ns)
[[ -n $hot && -n $slept ]] || fail "cpu_split said: $said"

# sum PATTERN FILE: the weight of the folded lines that match PATTERN.
sum() { awk -v re="$1" '$0 ~ re { s += $NF } END { printf "%.0f\n", s }' "$2"; }
"$GPUPERF" flamegraph --folded --weight cpu -o "$dir/cpu.folded" "$dir/rec" 2>/dev/null ||
  fail "flamegraph --weight cpu failed"
"$GPUPERF" flamegraph --folded --weight offcpu -o "$dir/off.folded" "$dir/rec" 2>/dev/null ||
  fail "flamegraph --weight offcpu failed"
"$GPUPERF" flamegraph --folded --weight all -o "$dir/all.folded" "$dir/rec" 2>/dev/null ||
  fail "flamegraph --weight all failed"
hot_ns=$(sum 'cpu_split_hot' "$dir/cpu.folded")
warm_ns=$(sum 'cpu_split_warm' "$dir/cpu.folded")
python3 - "$hot_ns" "$warm_ns" "$hot" "$warm" <<'PY' || fail "on-CPU split off by more than 5 points"
import sys
got_hot, got_warm, hot, warm = map(int, sys.argv[1:])
share = 100.0 * got_hot / max(1, got_hot + got_warm)
truth = 100.0 * hot / (hot + warm)
print("on-CPU: cpu_split_hot %.1f%% of hot+warm (truth %.1f%%), %d + %d ns sampled, %d + %d ns run"
      % (share, truth, got_hot, got_warm, hot, warm))
sys.exit(0 if abs(share - truth) <= 5 and got_hot + got_warm > 0.8 * (hot + warm) else 1)
PY
# Every on-CPU line ends in [cpu], every off-CPU line in [off-cpu].
grep -qv ';\[cpu\] [0-9]*$' "$dir/cpu.folded" && fail "an on-CPU line without the [cpu] leaf"
grep -qv ';\[off-cpu\] [0-9]*$' "$dir/off.folded" && fail "an off-CPU line without the [off-cpu] leaf"

sleep_got=$(sum 'cpu_split_sleep.*\[sleep\]' "$dir/off.folded")
sync_got=$(sum 'cpu_split_gpu_wait;cudaStreamSynchronize;.*\[wait: GPU sync\]' "$dir/off.folded")
python3 - "$sleep_got" "$slept" "$sync_got" "$synced" <<'PY' || fail "blocked time off by more than 5%"
import sys
sleep_got, slept, sync_got, synced = map(int, sys.argv[1:])
ok = True
for name, got, truth in (("sleep in cpu_split_sleep", sleep_got, slept),
                         ("GPU sync wait in cpu_split_gpu_wait", sync_got, synced)):
    error = abs(got - truth) / truth
    print("off-CPU: %s %.1f ms (truth %.1f ms, %.1f%% off)" % (name, got / 1e6, truth / 1e6, 100 * error))
    ok = ok and error <= 0.05
sys.exit(0 if ok else 1)
PY
# The unified graph holds both, with their weights unchanged.
[[ $(sum '' "$dir/all.folded") -eq $(( $(sum '' "$dir/cpu.folded") + $(sum '' "$dir/off.folded") )) ]] ||
  fail "--weight all is not the sum of cpu and offcpu here (no GPU work in this program)"

# The report's CPU part names the same functions and the sync wait.
"$GPUPERF" report --sections cpu "$dir/rec" > "$dir/report.txt" 2>&1 || fail "report failed"
grep -q "CPU time: where threads ran" "$dir/report.txt" || fail "report: no CPU part"
grep -q "cpu_split_spin" "$dir/report.txt" || fail "report: cpu_split_spin not among the functions"
grep -q "GPU sync .*cudaStreamSynchronize" "$dir/report.txt" || fail "report: no GPU sync row"
"$GPUPERF" report --format json --sections cpu "$dir/rec" > "$dir/report.json" 2>/dev/null
python3 - "$dir/report.json" <<'PY' || fail "report JSON: CPU part wrong"
import json, sys
cpu = json.load(open(sys.argv[1]))["cpu"]
assert cpu["samples"] > 500 and cpu["gpu_wait_ns"] > 0, cpu
assert any(f["function"] == "cpu_split_hot" for f in cpu["functions"]), cpu["functions"][:5]
PY

# --system: processes gpuperf did not start are sampled too, for --duration seconds (two
# spinners, so that two processes are on CPU however idle the rest of the machine is).
"$app" 3000 0 0 > /dev/null &
spinner=$!
"$app" 3000 0 0 > /dev/null &
spinner2=$!
sleep 0.3
"$GPUPERF" record --system --cpu --off-cpu --duration 1 -o "$dir/system" > /dev/null 2> "$dir/system.err" ||
  fail "--system: $(tail -2 "$dir/system.err")"
kill "$spinner" "$spinner2" 2>/dev/null; wait "$spinner" "$spinner2" 2>/dev/null
"$GPUPERF" flamegraph --folded --weight cpu -o "$dir/system.folded" "$dir/system" 2>/dev/null
grep -q "\[pid $spinner\] .*cpu_split.*cpu_split_hot" "$dir/system.folded" ||
  fail "--system: no samples of pid $spinner in cpu_split_hot"
[[ $(cut -d';' -f1 "$dir/system.folded" | sort -u | wc -l) -gt 1 ]] || fail "--system: one process only"
expect_stderr_contains "needs --duration" "$GPUPERF" record --system --cpu -o "$dir/system2"
expect_stderr_contains "add --cpu" "$GPUPERF" record --system --duration 1 -o "$dir/system3"

# A thread still blocked when profiling stops sends the interval so far: the program sleeps
# 3 s from its start, the profiler stops after 2 s, and the sleep's share of those seconds is
# there (before, an interval that had not ended was lost whole). The program's start-up
# under load takes part of the window: at least half of it must be the sleep.
"$GPUPERF" record --cpu --off-cpu --duration 2 -o "$dir/window" -- "$app" 0 3000 0 \
  > "$dir/window.out" 2> "$dir/window.err" || fail "--duration window: $(tail -2 "$dir/window.err")"
"$GPUPERF" flamegraph --folded --weight offcpu -o "$dir/window.folded" "$dir/window" 2>/dev/null
slept=$(grep 'cpu_split_sleep' "$dir/window.folded" | awk '{ s += $NF } END { print s + 0 }')
echo "off-CPU: cpu_split_sleep ${slept} ns in a 2 s window that ended during the sleep"
[[ $slept -ge 1000000000 && $slept -le 2050000000 ]] ||
  fail "--duration window: cpu_split_sleep blocked ${slept} ns, want 1-2.05 s (the sleep was cut by the window)"

# Without privileges: one line that says what to run, and the GPU recording goes on.
if [[ -x $fake_app ]] && command -v setpriv >/dev/null; then
  mkdir -m 777 "$dir/nobody"
  setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
    "$GPUPERF" record -o "$dir/nobody/rec" --inject-lib "$lib" --cpu --off-cpu -- "$fake_app" basic \
    > "$dir/nobody.out" 2> "$dir/nobody.err"
  rc=$?
  [[ $rc -eq 0 ]] || fail "as nobody: exit $rc: $(tail -2 "$dir/nobody.err")"
  line=$(grep -c "CPU profiling needs root or CAP_BPF+CAP_PERFMON" "$dir/nobody.err")
  [[ $line -eq 1 ]] || fail "as nobody: want one line about privileges, got: $(cat "$dir/nobody.err")"
  grep -q "sudo setcap cap_bpf,cap_perfmon+ep" "$dir/nobody.err" || fail "as nobody: no setcap hint"
  grep -q "recording the GPU only" "$dir/nobody.err" || fail "as nobody: does not say the GPU recording goes on"
  ls "$dir"/nobody/rec/fake_cuda_app.*.gpt >/dev/null 2>&1 || fail "as nobody: no GPU trace"
  ls "$dir"/nobody/rec/cpu.*.gpt >/dev/null 2>&1 && fail "as nobody: a CPU trace appeared"
  kernels=$("$GPUPERF" dump "$dir/nobody/rec" 2>/dev/null | grep -c '^kernel ')
  [[ $kernels -gt 0 ]] || fail "as nobody: the GPU trace has no kernels"
else
  echo "note: no fake CUDA app or setpriv: the unprivileged run is not checked"
fi
finish
