# The Prometheus endpoint scraped during a 16-thread x 4-stream soak (issue 15): `serve` answers
# every scrape while launch_bound runs flat out under `record`, its launch counter only grows,
# and its last value before the end is at most what the trace finally holds.
soakscrape_check() {
  local dir=$work/rec/soakscrape sout=$out/soakscrape port=9477
  mkdir -p "$sout"
  timeout 120 "$gp" record -o "$dir" --force -- "$ex/launch_bound" --threads 16 --streams 4 \
    --seconds 30 > "$sout/record.out" 2> "$sout/record.err" &
  local job=$!
  "$gp" serve --listen "127.0.0.1:$port" > "$sout/serve.log" 2>&1 &
  local server=$!
  local problems=() previous=0 scrapes=0 slowest=0 n
  sleep 3
  for n in $(seq 1 12); do
    local t0 t1 value
    t0=$(date +%s%N)
    curl -sf "http://127.0.0.1:$port/metrics" > "$sout/scrape.$n.txt" || problems+=("scrape $n failed")
    t1=$(date +%s%N)
    (( (t1 - t0) / 1000000 > slowest )) && slowest=$(( (t1 - t0) / 1000000 ))
    value=$(awk '/^gpuperf_kernel_launches_total[{ ]/ {s += $NF} END {printf "%d", s}' "$sout/scrape.$n.txt")
    echo "scrape $n: $(( (t1 - t0) / 1000000 )) ms, kernel launches $value" >> "$sout/scrapes.txt"
    [[ ${value:-0} -ge $previous ]] || problems+=("counter went down at scrape $n")
    previous=${value:-0}
    scrapes=$((scrapes + 1))
    sleep 2
  done
  wait "$job"
  local rc=$?
  kill "$server" 2>/dev/null; wait "$server" 2>/dev/null
  local recorded; recorded=$(sed -n 's/^  kernels *\([0-9,]*\).*/\1/p' "$sout/record.err" | tr -d ,)
  grep -E "^gpuperf: |^  (kernels|lost|LOST)" "$sout/record.err" | sed 's/^/   /' >> "$results"
  sed 's/^/   /' "$sout/scrapes.txt" >> "$results"
  [[ $rc -eq 0 ]] || problems+=("record exited $rc")
  [[ $previous -gt 0 ]] || problems+=("the endpoint never showed launches")
  [[ ${recorded:-0} -ge $previous ]] || problems+=("endpoint said $previous, trace holds ${recorded:-?}")
  grep -q "lost      nothing" "$sout/record.err" || problems+=("the soak lost records")
  note soakscrape "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-$scrapes scrapes during the soak, slowest ${slowest} ms, last ${previous} launches, trace ${recorded:-?} kernels, nothing lost}"
}
