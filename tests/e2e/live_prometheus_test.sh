#!/usr/bin/env bash
# A real Prometheus server (Debian's prometheus) scrapes `gpuperf serve` on loopback while a
# program driven through the fake libcupti runs, and queries through its HTTP API return the
# program's own counts. Prometheus asks for OpenMetrics first, so `up == 1` also says that it
# parsed what serve wrote. All the while, 16 slow clients hold connections to serve.
# Bounded: everything here stops within a minute.
source "$(dirname "$0")/lib.sh"
use_live_app prometheus curl python3

# The program, as rank 3 of 8 (what torchrun would set).
record_live_app "$work/rec" 200 env RANK=3 WORLD_SIZE=8 || finish
start_serve || finish
target=127.0.0.1:$port

# Slow clients hold 16 connections to serve all along, half of them with half a request
# sent (tests/e2e/hold_connections.py): Prometheus' scrapes still get through.
python3 "$SRC/tests/e2e/hold_connections.py" "$port" 16 "$work/held" "$work/stop" > "$work/held.out" 2>&1 &
pids+=($!)
wait_until test -s "$work/held" || fail "the slow clients never connected: $(cat "$work/held.out")"

# A free loopback port for Prometheus's own API.
api_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: gpuperf
    static_configs:
      - targets: ['$target']
EOF
timeout 90 prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
  --web.listen-address="127.0.0.1:$api_port" --log.level=warn > "$work/prometheus.log" 2>&1 &
pids+=($!)

# query EXPR: the value of the first series, or nothing.
query() {
  curl -sf -G "http://127.0.0.1:$api_port/api/v1/query" --data-urlencode "query=$1" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")' 2>/dev/null
}
check() {  # check EXPR VALUE: waits for Prometheus to have scraped it
  local expr=$1 want=$2 got=""
  for _ in $(seq 90); do
    got=$(query "$expr")
    [[ $got == "$want" ]] && return 0
    sleep 0.5
  done
  fail "Prometheus: $expr = '$got', want $want ($(tail -3 "$work/prometheus.log"))"
}
check 'up{job="gpuperf"}' 1
check 'gpuperf_gpu_operations_total{job="gpuperf",kind="kernel",rank="3",gpu="0"}' "$(field kernels "$counts")"
check 'gpuperf_kernel_launches_total{kernel="scale(float*, int)"}' "$(field scale_launches "$totals")"
check 'gpuperf_copy_bytes_total{direction="htod"}' "$(field htod_bytes "$totals")"
check 'gpuperf_memory_allocated_bytes{state="peak"}' "$(field memory_peak_bytes "$totals")"
check 'sum(gpuperf_api_failures_total)' 1
check 'gpuperf_process_info{world_size="8"}' 1
# Counters are counters to Prometheus: rate() of one works (and is 0, nothing more happens).
check 'rate(gpuperf_gpu_operations_total{kind="kernel"}[5s])' 0
finish
