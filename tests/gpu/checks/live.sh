# live: gpuperf top and gpuperf serve beside a running PyTorch training job (docs/live.md).
# Sourced by tests/gpu/run.sh (uses $gp $ex $src $work $out, note). Leaves in $out/live/:
#   top.txt      `gpuperf top --once` text while the job runs (the screen's content)
#   screen.txt   the interactive screen captured from tmux, when tmux is installed
#   top.json     `gpuperf top --once --format json` (NVML joined)
#   metrics.txt  a scrape of `gpuperf serve` (Prometheus text), metrics.om (OpenMetrics)
#   cost.txt     bench/overhead/live_cost.sh on launch_bound: the page on vs off, and the
#                writer thread's time per kernel
# Passes when the job's page shows kernels and GPU time, its device is joined with NVML (UUID,
# utilization), and the scrape has the kernel counter with DCGM's gpu and UUID labels.
live_check() {
  local dir=$out/live pages=$work/live-pages problems=()
  mkdir -p "$dir"
  echo "== live: gpuperf top and serve beside pytorch_transformer --train" | tee -a "$results"
  GPUPERF_LIVE_DIR=$pages timeout 300 "$gp" record -o "$work/rec/live" --force -- \
    python3 "$src/examples/pytorch_transformer.py" --train --steps 100000 --no-check \
    > "$work/live.out" 2> "$work/live.err" &
  local record_pid=$! job=""
  # The job's page, once it holds a few hundred kernels (torch import and CUDA start first).
  local t0=$SECONDS
  while [[ $((SECONDS - t0)) -lt 90 ]]; do
    GPUPERF_LIVE_DIR=$pages "$gp" top --once --format json > "$dir/top.json" 2>/dev/null &&
      job=$(python3 -c 'import json,sys
p=[p for p in json.load(open(sys.argv[1]))["processes"] if p.get("devices") and p["devices"][0]["kernels"] > 500]
print(p[0]["pid"] if p else "")' "$dir/top.json" 2>/dev/null)
    [[ -n $job ]] && break
    sleep 1
  done
  if [[ -z $job ]]; then
    problems+=("no page with kernels within 90 s")
  else
    sleep 6  # a full rate window of steady training
    GPUPERF_LIVE_DIR=$pages "$gp" top --once > "$dir/top.txt" 2>&1 || problems+=("top --once failed")
    GPUPERF_LIVE_DIR=$pages "$gp" top --once --format json > "$dir/top.json" 2>&1 || problems+=("top --once --format json failed")
    if command -v tmux >/dev/null; then
      tmux -L gpuperf-live -f /dev/null new-session -d -s top -x 160 -y 45 \
        "GPUPERF_LIVE_DIR=$pages $gp top --interval 0.5"
      sleep 3
      tmux -L gpuperf-live capture-pane -p -t top > "$dir/screen.txt"
      tmux -L gpuperf-live send-keys -t top q
      sleep 1
      tmux -L gpuperf-live kill-server 2>/dev/null
    fi
    GPUPERF_LIVE_DIR=$pages "$gp" serve --listen 127.0.0.1:0 2> "$work/serve.err" &
    local serve_pid=$! port=""
    for _ in $(seq 50); do
      port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$work/serve.err")
      [[ -n $port ]] && break
      sleep 0.1
    done
    # python3's urllib rather than curl, which GPU images may lack.
    local fetch='import sys, urllib.request
r = urllib.request.Request(sys.argv[1], headers={"Accept": sys.argv[2]} if sys.argv[2] else {})
sys.stdout.write(urllib.request.urlopen(r, timeout=10).read().decode())'
    python3 -c "$fetch" "http://127.0.0.1:$port/metrics" "" > "$dir/metrics.txt" ||
      problems+=("scrape failed")
    python3 -c "$fetch" "http://127.0.0.1:$port/metrics" "application/openmetrics-text;version=1.0.0" \
      > "$dir/metrics.om" || problems+=("OpenMetrics scrape failed")
    kill -TERM "$serve_pid"
    wait "$serve_pid"
    local verdict
    verdict=$(python3 - "$dir/top.json" "$job" <<'EOF'
import json, sys
data = json.load(open(sys.argv[1]))
p = [p for p in data["processes"] if p["pid"] == int(sys.argv[2])][0]
d = p["devices"][0]
problems = []
if not data["nvml"]["available"]:
    problems.append("NVML not available: " + data["nvml"].get("why", "?"))
if "nvml" not in d:
    problems.append(f"device {d['uuid']} not joined with NVML")
elif d["nvml"].get("utilization_percent") is None:
    problems.append("no NVML utilization")
if d["kernel_ns"] <= 0 or d["rates"]["kernels_per_s"] <= 0:
    problems.append("no kernel time or launch rate")
if not p["kernels"]:
    problems.append("no top kernels")
print("; ".join(problems) if problems else
      f"active {d['rates']['active']:.0%}, {d['rates']['kernels_per_s']:.0f} kernels/s, "
      f"{len(p['kernels'])} top kernels, GPU util {d['nvml']['utilization_percent']}%")
sys.exit(1 if problems else 0)
EOF
    ) || problems+=("$verdict")
    grep -qE "^gpuperf_gpu_operations_total\{pid=\"$job\",gpu=\"[0-9]+\",UUID=\"GPU-[0-9a-f-]+\".*kind=\"kernel\"\} [1-9]" \
      "$dir/metrics.txt" || problems+=("scrape lacks the job's kernel counter with gpu/UUID labels")
    local series; series=$(grep -c "^gpuperf_kernel_seconds_total{pid=\"$job\"" "$dir/metrics.txt")
    [[ $series -ge 1 && $series -le 20 ]] || problems+=("$series kernel series (want 1-20)")
    [[ $(tail -1 "$dir/metrics.om") == "# EOF" ]] || problems+=("OpenMetrics text does not end in # EOF")
    echo "   $verdict" | tee -a "$results"
  fi
  # End the job: SIGINT, as Ctrl-C would (record forwards it; Python unwinds, the recorder
  # flushes and removes the page).
  kill -INT "$record_pid" 2>/dev/null
  wait "$record_pid"
  # The writer thread's time for the page in this job.
  local kernels live_ns
  kernels=$("$gp" dump "$work/rec/live" 2>/dev/null | grep -c '^kernel ')
  live_ns=$(trace_stat "$work/rec/live" live_update_ns)
  echo "   live page writer time: ${live_ns:-?} ns for ${kernels:-?} kernels" | tee -a "$results"
  [[ -n $live_ns && $kernels -gt 0 ]] || problems+=("no live_update_ns in the trace")
  [[ ! -e $pages/$job.live ]] || problems+=("the job's page outlived it")
  # The page on vs off on launch_bound, alternated.
  bash "$src/bench/overhead/live_cost.sh" "$gp" "$bin/libgpuperf_inject.so" 3 -- \
    "$ex/launch_bound" --launches 500000 > "$dir/cost.txt" 2>&1
  sed 's/^/   /' "$dir/cost.txt" | tee -a "$results"
  note live "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-top/json/serve beside PyTorch; $(tail -1 "$dir/cost.txt")}"
}
