#!/usr/bin/env bash
# Slow clients cannot delay a scrape of `gpuperf serve` (docs/live.md): 16 connections that
# connect and send nothing, or half a request, and hold on (one the server closes at its
# deadline is opened again at once) are all waiting while three scrapes with Prometheus'
# default timeout (curl -m 10) get the recorded program's exact counts. Before, serve took
# one connection at a time and gave each 5 s: a scrape waited 80 s.
source "$(dirname "$0")/lib.sh"
use_live_app curl python3
record_live_app "$work/rec" 200 || finish
start_serve || finish
metric="gpuperf_gpu_operations_total{pid=\"$app_pid\""
has_kernels() { grep -F "$metric" "$1" | grep -q "kind=\"kernel\"} $kernels$"; }
# The page is complete once a scrape without slow clients has all the kernels.
page_complete() { curl -sf -m 10 "http://127.0.0.1:$port/metrics" > "$work/first" 2>/dev/null && has_kernels "$work/first"; }
wait_until page_complete || fail "serve never showed the app's $kernels kernels"

python3 "$SRC/tests/e2e/hold_connections.py" "$port" 16 "$work/ready" "$work/stop" > "$work/held.out" 2>&1 &
holding=$!
pids+=("$holding")
wait_until test -s "$work/ready" || fail "the slow clients never connected: $(cat "$work/held.out")"
for scrape in 1 2 3; do
  curl -sf -m 10 "http://127.0.0.1:$port/metrics" > "$work/metrics.$scrape"
  rc=$?
  [[ $rc -eq 0 ]] || fail "scrape $scrape beside 16 slow clients failed (curl exit $rc; 28: not within 10 s)"
  has_kernels "$work/metrics.$scrape" || fail "scrape $scrape lacks the app's $kernels kernels"
done
kill -0 "$holding" 2>/dev/null || fail "the slow clients gave up: $(cat "$work/held.out")"
touch "$work/stop"
wait "$holding" || fail "the slow clients failed: $(cat "$work/held.out")"
kill -TERM "$serve_pid"
wait "$serve_pid" || fail "serve did not exit cleanly on SIGTERM (exit $?)"
finish
