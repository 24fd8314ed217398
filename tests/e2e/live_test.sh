#!/usr/bin/env bash
# The live page end to end (docs/live.md): a program driven through the fake libcupti with
# known totals is recorded; while it runs, `gpuperf top --once --format json` and the
# `gpuperf serve` endpoint show exactly those totals; its page goes when it ends. A writer
# killed inside a write is skipped and its page removed; one stopped inside a write shows
# as busy; neither ever blocks a reader. GPUPERF_LIVE=off and a directory others can write
# leave no page.
source "$(dirname "$0")/lib.sh"
use_live_app python3

# --- a running program's page: exact totals through top --once --format json ---
record_live_app "$work/rec" 200 || finish
# The page is complete once its kernels and its API calls (drained separately) are all there.
page_complete() {
  "$GPUPERF" top --once --format json --pid "$app_pid" > "$work/top.json" 2> "$work/top.err" &&
    python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))["processes"][0]
sys.exit(0 if (p["devices"][0]["kernels"], p["api"]["calls"]) == (int(sys.argv[2]), int(sys.argv[3])) else 1)' \
      "$work/top.json" "$(field kernels "$counts")" "$(field runtime_api "$counts")" 2>/dev/null
}
wait_until page_complete || fail "top never showed the app's $(field kernels "$counts") kernels and $(field runtime_api "$counts") API calls: $(cat "$work/top.err" "$work/top.json" | head -20)"
[[ $(stat -c %a "$GPUPERF_LIVE_DIR") == 700 && $(stat -c %a "$GPUPERF_LIVE_DIR/$app_pid.live") == 600 ]] \
  || fail "live directory/page modes: $(stat -c '%a %n' "$GPUPERF_LIVE_DIR" "$GPUPERF_LIVE_DIR"/*)"
python3 - "$work/top.json" "$counts" "$totals" <<'EOF' || fail "top --once --format json does not hold the app's totals"
import json, re, sys
data = json.load(open(sys.argv[1]))
said = dict(re.findall(r"(\w+)=(\d+)", sys.argv[2] + " " + sys.argv[3]))
said = {k: int(v) for k, v in said.items()}
p = data["processes"][0]
d = p["devices"][0]
kernels = {k["name"]: k for k in p["kernels"]}
apis = {a["name"]: a for a in p["apis"]}
checks = {
    "pid": (p["pid"], said["pid"]),
    "state": (p["state"], "ok"),
    "kernels": (d["kernels"], said["kernels"]),
    "kernel_ns": (d["kernel_ns"], said["kernel_ns"]),
    "copy_ns": (d["copy_ns"], said["copy_ns"]),
    "set_ns": (d["set_ns"], said["set_ns"]),
    # The fake's work never overlaps: the union is the sum.
    "active_ns": (d["active_ns"], said["kernel_ns"] + said["copy_ns"] + said["set_ns"]),
    "copies": (d["copies"], said["memcpys"]),
    "sets": (d["sets"], said["memsets"]),
    "htod": (d["copy_bytes"]["htod"], said["htod_bytes"]),
    "dtoh": (d["copy_bytes"]["dtoh"], said["dtoh_bytes"]),
    "set_bytes": (d["set_bytes"], said["set_bytes"]),
    "memory": (d["memory_bytes"], said["memory_bytes"]),
    "memory_peak": (d["memory_peak_bytes"], said["memory_peak_bytes"]),
    "allocations": (d["allocations"], 2),
    "frees": (d["frees"], 1),
    "uuid": (d["uuid"], "GPU-01000000-0000-0000-0000-000000000000"),
    "device_name": (d["name"], "NVIDIA H100 80GB HBM3 (fake)"),
    "api_calls": (p["api"]["calls"], said["runtime_api"]),
    "api_failures": (p["api"]["failures"], said["api_failures"]),
    "malloc_failures": (apis["cudaMalloc"]["failures"], 1),
    "launch_calls": (apis["cudaLaunchKernel"]["calls"], said["launches"]),
    "syncs": (p["sync"]["calls"], said["syncs"]),
    # A wait is the host call's own time, taken by gpuperf's callbacks around the call
    # (src/inject/cupti/host_waits.h): no shorter than the wait the app timed inside the
    # call, no longer than the whole call the app timed around it.
    "sync_ns": (said["sync_ns"] <= p["sync"]["ns"] <= said["sync_call_ns"], True),
    "vecAdd_count": (kernels["vecAdd(float const*, float const*, float*, int)"]["count"], said["vecAdd_launches"]),
    "vecAdd_ns": (kernels["vecAdd(float const*, float const*, float*, int)"]["ns"], said["vecAdd_ns"]),
    "scale_count": (kernels["scale(float*, int)"]["count"], said["scale_launches"]),
    "scale_ns": (kernels["scale(float*, int)"]["ns"], said["scale_ns"]),
    "dropped": (p["dropped"]["total"], 0),
    "nvml": (data["nvml"]["available"], False),
}
bad = [f"{k}: got {got!r}, want {want!r}" for k, (got, want) in checks.items() if got != want]
for line in bad:
    print("  " + line, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF

# The text picture a script (or a person) gets.
"$GPUPERF" top --once --pid "$app_pid" > "$work/top.txt" || fail "top --once (text) failed"
grep -q "vecAdd(float const\*, float const\*, float\*, int)" "$work/top.txt" || fail "top --once text lacks the top kernel"
grep -qE "^ +$app_pid +- +0 .* 3\.00 MiB +4\.00 MiB +0 +ok +.*fake_cuda_app live" "$work/top.txt" ||
  fail "top --once text lacks the process row: $(cat "$work/top.txt")"

# --- NVML joined by UUID (a stand-in libnvidia-ml.so.1: CUDA device 0 is NVML's device 3) ---
nvml=$GPUPERF_BINARY_DIR/tests/fake_nvml
if [[ -e $nvml/libnvidia-ml.so.1 ]]; then
  LD_LIBRARY_PATH=$nvml "$GPUPERF" top --once --format json --pid "$app_pid" > "$work/nvml.json" ||
    fail "top with NVML failed"
  python3 - "$work/nvml.json" <<'EOF' || fail "top --format json did not join NVML: $(head -c 600 "$work/nvml.json")"
import json, sys
data = json.load(open(sys.argv[1]))
d = data["processes"][0]["devices"][0]
n = d.get("nvml", {})
ok = (data["nvml"]["available"] and len(data["nvml"]["gpus"]) == 4 and d["gpu"] == 3 and
      d["device"] == 0 and n.get("gpu") == 3 and n.get("utilization_percent") == 87 and
      n.get("power_watts") == 351.5 and n.get("sm_clock_mhz") == 1980 and
      "temperature_c" not in n)
sys.exit(0 if ok else 1)
EOF
  LD_LIBRARY_PATH=$nvml "$GPUPERF" top --once --pid "$app_pid" > "$work/nvml.txt"
  grep -qE "^ +3 +NVIDIA H100 80GB HBM3 \(fake NVML\) +87% +12\.0 GiB +79\.6 GiB +1980 +2619 +351 W +-$" "$work/nvml.txt" ||
    fail "top's device table: $(head -12 "$work/nvml.txt")"
  grep -qE "^ +$app_pid +- +3 " "$work/nvml.txt" || fail "top's process row does not name NVML's device 3"
  # serve labels the device as DCGM does: NVML's index.
  LD_LIBRARY_PATH=$nvml start_serve
  curl -sf "http://127.0.0.1:$port/metrics" |
    grep -q "^gpuperf_gpu_operations_total{pid=\"$app_pid\",gpu=\"3\",UUID=\"GPU-01000000-0000-0000-0000-000000000000\"" ||
    fail "serve does not label the device gpu=\"3\" with NVML"
  kill -TERM "$serve_pid"
fi

# --- the same totals through gpuperf serve ---
start_serve
curl -sf "http://127.0.0.1:$port/metrics" > "$work/metrics.txt" || fail "scrape failed"
device="pid=\"$app_pid\",gpu=\"0\",UUID=\"GPU-01000000-0000-0000-0000-000000000000\",Hostname=\"$(hostname)\""
seconds() { printf '%d.%09d' $(($1 / 1000000000)) $(($1 % 1000000000)); }
for line in \
  "gpuperf_gpu_operations_total{$device,kind=\"kernel\"} $(field kernels "$counts")" \
  "gpuperf_gpu_busy_seconds_total{$device,kind=\"kernel\"} $(seconds "$(field kernel_ns "$totals")")" \
  "gpuperf_gpu_busy_seconds_total{$device,kind=\"copy\"} $(seconds "$(field copy_ns "$totals")")" \
  "gpuperf_copy_bytes_total{$device,direction=\"htod\"} $(field htod_bytes "$totals")" \
  "gpuperf_memory_allocated_bytes{$device,state=\"peak\"} $(field memory_peak_bytes "$totals")" \
  "gpuperf_kernel_launches_total{$device,kernel=\"scale(float*, int)\"} $(field scale_launches "$totals")" \
  "gpuperf_kernel_seconds_total{$device,kernel=\"vecAdd(float const*, float const*, float*, int)\"} $(seconds "$(field vecAdd_ns "$totals")")" \
  "gpuperf_api_calls_total{pid=\"$app_pid\",api=\"cudaLaunchKernel\"} $(field launches "$counts")" \
  "gpuperf_api_failures_total{pid=\"$app_pid\",api=\"cudaMalloc\"} 1" \
  "gpuperf_dropped_records_total{pid=\"$app_pid\",reason=\"cupti_dropped_records\"} 0" \
  'gpuperf_live_pages{state="ok"} 1'; do
  grep -qxF "$line" "$work/metrics.txt" || fail "scrape lacks: $line"
done
# The wait time, between the app's two figures for it (as top's above).
waited=$(sed -n "s/^gpuperf_sync_wait_seconds_total{pid=\"$app_pid\"} \([0-9.]*\)$/\1/p" "$work/metrics.txt")
python3 -c 'import sys; got, least, most = float(sys.argv[1] or -1), int(sys.argv[2]) / 1e9, int(sys.argv[3]) / 1e9
sys.exit(0 if least <= got + 1e-9 <= most + 1e-9 else 1)' "$waited" "$(field sync_ns "$totals")" "$(field sync_call_ns "$totals")" ||
  fail "scrape's sync wait is $waited s, the app's $(seconds "$(field sync_ns "$totals")") s inside its calls, $(seconds "$(field sync_call_ns "$totals")") s around them"
grep -q '^# TYPE gpuperf_gpu_busy_seconds_total counter$' "$work/metrics.txt" || fail "counters are not typed counter"
grep -q '^# TYPE gpuperf_memory_allocated_bytes gauge$' "$work/metrics.txt" || fail "memory is not a gauge"
if command -v promtool >/dev/null; then
  promtool check metrics < "$work/metrics.txt" > "$work/promtool.txt" 2>&1 ||
    fail "promtool check metrics: $(head -5 "$work/promtool.txt")"
fi
curl -sf -H 'Accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' \
  -D "$work/om.headers" "http://127.0.0.1:$port/metrics" > "$work/metrics.om" || fail "OpenMetrics scrape failed"
grep -qi '^Content-Type: application/openmetrics-text; version=1.0.0' "$work/om.headers" || fail "OpenMetrics content type"
[[ $(tail -1 "$work/metrics.om") == "# EOF" ]] || fail "OpenMetrics text does not end with # EOF"
grep -q '^# TYPE gpuperf_gpu_busy_seconds counter$' "$work/metrics.om" || fail "OpenMetrics family name"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/nothing") == 404 ]] || fail "unknown path is not 404"

# --- the page goes with the process ---
touch "$work/release"
wait "$record_pid" || fail "record exited $?"
[[ ! -e $GPUPERF_LIVE_DIR/$app_pid.live ]] || fail "the page outlived its process"
"$GPUPERF" dump "$work/rec" | grep -q '# live_updates$' || fail "the trace does not count live page updates"

# --- a writer killed inside a write: skipped, removed, never waited on ---
{ "$holder" "$GPUPERF_LIVE_DIR" die > "$work/die.out"; } 2>/dev/null  # the shell's "Killed"
dead=$(sed -n 's/^holding //p' "$work/die.out")
[[ -n $dead && -e $GPUPERF_LIVE_DIR/$dead.live ]] || fail "the holder left no page: $(cat "$work/die.out")"
start=$(date +%s%N)
timeout 10 "$GPUPERF" top --once --format json > "$work/dead.json" || fail "top --once with a dead writer's page: exit $?"
took_ms=$((($(date +%s%N) - start) / 1000000))
[[ $took_ms -lt 3000 ]] || fail "top took $took_ms ms over a dead writer's page"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["processes"] == [] and d["stale_pages_removed"] == 1 else 1)' \
  "$work/dead.json" || fail "a dead writer's page was shown or not removed: $(cat "$work/dead.json")"
[[ ! -e $GPUPERF_LIVE_DIR/$dead.live ]] || fail "a dead writer's page is still there"

# --- a writer stopped inside a write: busy, and top and serve still answer ---
"$holder" "$GPUPERF_LIVE_DIR" stop > "$work/stop.out" 2>&1 &
holder_pid=$!
pids+=("$holder_pid")
wait_until grep -qs '^holding' "$work/stop.out" || fail "the stopping holder never said it holds"
wait_until bash -c "grep -q '^State:.*stopped' /proc/$holder_pid/status" || fail "the holder did not stop"
start=$(date +%s%N)
timeout 10 "$GPUPERF" top --once --format json --pid "$holder_pid" > "$work/stopped.json" || fail "top over a stopped writer: exit $?"
took_ms=$((($(date +%s%N) - start) / 1000000))
[[ $took_ms -lt 3000 ]] || fail "top took $took_ms ms over a stopped writer's page"
python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["processes"][0]; sys.exit(0 if p["state"] == "busy" and "devices" not in p and p["kernels"][0]["count"] == 1 else 1)' \
  "$work/stopped.json" || fail "a stopped writer's page is not shown as busy: $(head -30 "$work/stopped.json")"
timeout 10 curl -sf "http://127.0.0.1:$port/metrics" | grep -qx 'gpuperf_live_pages{state="busy"} 1' ||
  fail "serve does not count the busy page"
kill -KILL "$holder_pid"
wait "$holder_pid" 2>/dev/null
"$GPUPERF" top --once --format json > "$work/after.json"
[[ ! -e $GPUPERF_LIVE_DIR/$holder_pid.live ]] || fail "the killed holder's page stayed"
kill -TERM "$serve_pid"
wait "$serve_pid" || fail "serve did not exit cleanly on SIGTERM (exit $?)"

# --- no page when switched off, or when the directory is not private ---
no_page_run() {  # no_page_run NAME: records `live` briefly, with the caller's environment
  rm -f "$work/release"
  "$GPUPERF" record -o "$work/$1" --inject-lib "$lib" -- env FAKE_APP_RELEASE="$work/release" \
    "$app" live 10 20000 > "$work/$1.out" 2> "$work/$1.err" &
  local record=$!
  wait_until grep -qs '^fake-app: live ' "$work/$1.out"
  sleep 0.7  # past a flush period: a page would exist by now
  ls "$GPUPERF_LIVE_DIR" 2>/dev/null | grep -q '\.live$' && fail "$1: a page was created"
  touch "$work/release"
  wait "$record" || fail "$1: record exited $?"
}
GPUPERF_LIVE=off no_page_run live_off
mkdir -p "$work/open" && chmod 777 "$work/open"
GPUPERF_LIVE_DIR=$work/open no_page_run open_dir
grep -q "no live page, gpuperf top/serve will not see this process: .* is writable by other users" "$work/open_dir.err" \
  || fail "no line about the unsafe directory: $(cat "$work/open_dir.err")"
"$GPUPERF" dump "$work/open_dir" | grep -q '# live_page_unavailable$' || fail "live_page_unavailable not counted"

# --- bad command lines: one clear line, a usage exit ---
expect_exit 2 "$GPUPERF" top --format json
expect_stderr_contains "--format json needs --once" "$GPUPERF" top --format json
expect_exit 2 "$GPUPERF" top --once --sort speed
expect_exit 1 "$GPUPERF" top --once --pid 4000000000
expect_stderr_contains "no live page for pid" "$GPUPERF" top --once --pid 4000000
expect_exit 2 "$GPUPERF" serve --listen nonsense
expect_exit 2 "$GPUPERF" serve --top-kernels 65
finish
