# GPU check "metrics" (sourced by tests/gpu/run.sh): `gpuperf metrics` and
# `gpuperf record --pc-sampling` on examples/hw_bound.cu, whose kernels have known bottlenecks.
#
#   1. hw_bound alone: its own per-kernel times and bandwidth, and the DRAM peak from the device
#      attributes (the theoretical check).
#   2. gpuperf metrics (per kernel, set basic): bound of copy = memory, fma = compute, latency =
#      latency; copy's DRAM bandwidth against bytes/time measured by the program and the peak.
#   3. ncu on the same kernels and metrics (--clock-control none, base units): every shared
#      metric within 5% (or 2 points for percentages) of gpuperf's.
#   4. gpuperf metrics --ranges nvtx: one row per NVTX range, same bounds from one-pass metrics;
#      --ranges window:5ms: windows measured.
#   5. record --pc-sampling on the hot loop: >= 80% of its samples on the loop's lines; report,
#      `gpuperf source` (source and SASS), flamegraph --pc-frames.
#   6. wall time of each mode against the plain run (overhead), and small traces kept as CI
#      fixtures with a PROVENANCE file.
# Everything lands in $out/metrics/ (results.txt there repeats each step's verdict).
metrics_check() {
  local m=$out/metrics w=$work/metrics problems=()
  mkdir -p "$m" "$w"
  local log=$m/results.txt
  : > "$log"
  say() { echo "$*" | tee -a "$log" | tee -a "$results" >/dev/null; echo "$*"; }
  timed() {  # timed NAME CMD...: runs, saves stdout/stderr, records wall seconds
    local name=$1; shift
    local t0; t0=$(date +%s.%N)
    timeout 300 "$@" > "$m/$name.out" 2> "$m/$name.err"
    local rc=$?
    local t1; t1=$(date +%s.%N)
    echo "$name $(python3 -c "print(f'{$t1 - $t0:.2f}')") $rc" >> "$m/times.txt"
    return $rc
  }
  : > "$m/times.txt"
  local hw=$ex/hw_bound
  if [[ ! -x $hw ]]; then
    note metrics FAIL "examples/hw_bound not built (examples/build.sh)"
    return
  fi
  say "== metrics: hw_bound on $gpu"

  # 1. The program alone.
  timed plain "$hw" --repeat 3 || problems+=("hw_bound alone failed")
  grep '^hw_bound:' "$m/plain.out" | sed 's/^/   /' | tee -a "$log"

  # 2. Per kernel.
  timed metrics "$gp" metrics -v -o "$w/kernel" --force -- "$hw" --repeat 3 ||
    problems+=("gpuperf metrics exit $?")
  cat "$m/metrics.out" >> "$log"
  grep -E '^gpuperf' "$m/metrics.err" | sed 's/^/   /' >> "$log"
  "$gp" report "$w/kernel" --sections hardware --json -o "$m/kernel.json" 2>> "$m/metrics.err"
  "$gp" report "$w/kernel" > "$m/kernel_report.txt" 2>&1

  # 3. Nsight Compute on the same kernels.
  local ncu=${NCU:-/usr/local/cuda/bin/ncu}
  local names="sm__throughput.avg.pct_of_peak_sustained_elapsed,gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed,gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes.sum.per_second,sm__warps_active.avg.pct_of_peak_sustained_active,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,gpu__time_duration.sum"
  if [[ -x $ncu ]]; then
    timed ncu "$ncu" --csv --print-units base --clock-control none --metrics "$names" \
      --kernel-name "regex:copy_kernel|fma_kernel|latency_kernel" -- "$hw" --repeat 3 ||
      say "   ncu exit $? (see ncu.err)"
  else
    say "   ncu not found at $ncu: comparing with the program's own numbers only"
  fi

  # 4. Per NVTX range, and per time window.
  timed ranges "$gp" metrics -v --ranges nvtx -o "$w/nvtx" --force -- "$hw" --nvtx --repeat 3 ||
    problems+=("metrics --ranges nvtx exit $?")
  cat "$m/ranges.out" >> "$log"
  "$gp" report "$w/nvtx" --sections hardware --json -o "$m/nvtx.json" 2>> "$m/ranges.err"
  timed windows "$gp" metrics --ranges window:5ms -o "$w/window" --force -- "$hw" --kernel copy --repeat 20 ||
    problems+=("metrics --ranges window exit $?")
  "$gp" report "$w/window" --sections hardware --json -o "$m/window.json" 2>> "$m/windows.err"

  # 5. PC sampling on the hot loop, and a plain record for the overhead.
  timed record "$gp" record -o "$w/record" --force -- "$hw" --kernel hotloop --repeat 3 ||
    problems+=("record exit $?")
  timed plain_hotloop "$hw" --kernel hotloop --repeat 3
  timed pcsampling "$gp" record -v --pc-sampling -o "$w/pc" --force -- "$hw" --kernel hotloop --repeat 3 ||
    problems+=("record --pc-sampling exit $?")
  grep -E '^gpuperf|^  ' "$m/pcsampling.err" | sed 's/^/   /' >> "$log"
  "$gp" report "$w/pc" --sections hardware --json -o "$m/pc.json" 2>> "$m/pcsampling.err"
  "$gp" report "$w/pc" > "$m/pc_report.txt" 2>&1
  "$gp" source "$w/pc" hot_loop --source-dir "$src/examples" > "$m/source.txt" 2>&1
  "$gp" source "$w/pc" hot_loop --sass > "$m/source_sass.txt" 2>&1
  "$gp" flamegraph --pc-frames "$w/pc" -o "$m/pc_frames.svg" 2>> "$m/pcsampling.err"
  "$gp" flamegraph --pc-frames --folded "$w/pc" -o "$m/pc_frames.folded" 2>> "$m/pcsampling.err"
  "$gp" dump "$w/pc" 2>/dev/null | grep -E '^stat .*# (pc_|cubins|hardware|profiler)' | sort -u > "$m/pc_stats.txt"
  "$gp" dump "$w/kernel" 2>/dev/null | grep -E '^stat .*# (metric|hardware|profiler)' | sort -u > "$m/metric_stats.txt"

  # Judge everything in one place; the script prints one "ok"/"FAIL" line per claim.
  python3 - "$m" "$src/examples/hw_bound.cu" >> "$log" 2>&1 <<'PY'
import csv, io, json, re, sys
m, source = sys.argv[1], sys.argv[2]
fails = []
def say(ok, text):
    print(("ok   " if ok else "FAIL ") + text)
    if not ok: fails.append(text)
def load(name):
    try: return json.load(open(f"{m}/{name}"))
    except Exception as e: print(f"     cannot read {name}: {e}"); return {}

plain = open(f"{m}/plain.out").read()
peak = float(re.search(r"peak_dram_gbps=([\d.]+)", plain).group(1)) if "peak_dram" in plain else 0
own = {k: (float(ms), float(gbps)) for k, ms, gbps in
       re.findall(r"kernel=(\w+) ms=([\d.]+) bytes=[\d.]+ gbps=([\d.]+)", plain)}
print(f"     program: peak DRAM {peak:.0f} GB/s; per kernel (ms, GB/s) {own}")

def rows(doc, kind):
    return [r for r in doc.get("hardware", []) if r.get("kind") == kind]
def find(rs, word):
    return next((r for r in rs if word in r.get("name", "")), None)
def metric(r, name):
    return r.get("metrics", {}).get(name) if r else None

kernel = rows(load("kernel.json"), "kernel")
for word, bound in (("copy_kernel", "memory"), ("fma_kernel", "compute"), ("latency_kernel", "latency")):
    r = find(kernel, word)
    say(r is not None and r.get("bound") == bound,
        f"per kernel: {word} is {bound} bound (got {r and r.get('bound')}: {r and r.get('bound_reason')})")
copy = find(kernel, "copy_kernel")
bw = metric(copy, "dram__bytes.sum.per_second")
if bw and "copy" in own and peak:
    mine = own["copy"][1]
    say(abs(bw / 1e9 - mine) <= 0.15 * mine,
        f"copy DRAM bandwidth {bw/1e9:.0f} GB/s vs the program's bytes/time {mine:.0f} GB/s (15%)")
    say(bw / 1e9 <= peak * 1.02,
        f"copy DRAM bandwidth {bw/1e9:.0f} GB/s is {100*bw/1e9/peak:.0f}% of the {peak:.0f} GB/s peak")
    pct = metric(copy, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed")
    if pct: print(f"     copy dram% {pct:.1f} vs bandwidth/peak {100*bw/1e9/peak:.1f}")

# ncu: "Kernel Name","Metric Name","Metric Unit","Metric Value" per launch; averaged per kernel.
try:
    text = open(f"{m}/ncu.out").read()
    start = text.find('"ID"')
    table = list(csv.DictReader(io.StringIO(text[start:]))) if start >= 0 else []
except FileNotFoundError:
    table = []
if table:
    sums = {}
    for row in table:
        name = row.get("Kernel Name", "")
        key = next((w for w in ("copy_kernel", "fma_kernel", "latency_kernel") if w in name), None)
        try: value = float(row.get("Metric Value", "").replace(",", ""))
        except ValueError: continue
        if key: sums.setdefault((key, row["Metric Name"]), []).append(value)
    compared = 0
    for (word, name), values in sorted(sums.items()):
        theirs = sum(values) / len(values)
        ours = metric(find(kernel, word), name)
        if ours is None: continue
        compared += 1
        percent = name.endswith("pct") or "pct_of_peak" in name
        close = abs(ours - theirs) <= 0.05 * abs(theirs) or (percent and abs(ours - theirs) <= 2.0)
        say(close, f"ncu {word} {name}: gpuperf {ours:.4g} vs ncu {theirs:.4g}")
    say(compared > 0, f"{compared} metrics compared with ncu")
else:
    print("     no ncu table (see ncu.err): not compared")

nvtx = rows(load("nvtx.json"), "nvtx")
print("     nvtx ranges: " + ", ".join(f"{r['name']}={r.get('bound')}" for r in nvtx))
for word, bound in (("copy", "memory"), ("fma", "compute"), ("latency", "latency")):
    r = next((r for r in nvtx if r.get("name") == word), None)
    say(r is not None and r.get("bound") == bound and not r.get("serialized"),
        f"per NVTX range: {word} is {bound} bound, concurrent (got {r and r.get('bound')}: {r and r.get('bound_reason')})")
windows = rows(load("window.json"), "window")
say(len(windows) >= 1, f"time windows measured: {len(windows)}")

pc = load("pc.json").get("pc_sampling", [])
hot = next((k for k in pc if "hot_loop" in k.get("name", "")), None)
lines = open(source).read().splitlines()
begin = next(i + 1 for i, l in enumerate(lines) if "hot loop begins" in l)
end = next(i + 1 for i, l in enumerate(lines) if "hot loop ends" in l)
if hot:
    on_loop = sum(l["samples"] for l in hot["lines"] if l.get("file", "").endswith("hw_bound.cu") and begin <= l["line"] <= end)
    share = on_loop / hot["samples"] if hot["samples"] else 0
    say(share >= 0.8, f"PC sampling: {100*share:.1f}% of hot_loop_kernel's {hot['samples']} samples on lines {begin}-{end} (top lines {[(l['line'], l['samples']) for l in hot['lines']]})")
else:
    say(False, "PC sampling: no samples for hot_loop_kernel")

times = {n: float(t) for n, t, rc in (l.split() for l in open(f"{m}/times.txt"))}
def ratio(a, b): return f"{times[a]/times[b]:.2f}x" if a in times and b in times and times[b] else "?"
print(f"     wall seconds: {times}")
print(f"     overhead: metrics per kernel {ratio('metrics','plain')}, per NVTX range {ratio('ranges','plain')}, "
      f"record {ratio('record','plain_hotloop')}, record --pc-sampling {ratio('pcsampling','plain_hotloop')} (hot loop)")
# A table for docs/hardware-metrics.md ("Accuracy and overhead").
with open(f"{m}/overhead.md", "w") as md:
    md.write("| run of hw_bound | wall s | vs the plain run |\n|---|---|---|\n")
    for name, base, what in (("plain", "plain", "all kernels, no profiler"),
                             ("metrics", "plain", "gpuperf metrics (per kernel, basic)"),
                             ("ranges", "plain", "gpuperf metrics --ranges nvtx"),
                             ("plain_hotloop", "plain_hotloop", "hot loop only, no profiler"),
                             ("record", "plain_hotloop", "gpuperf record"),
                             ("pcsampling", "plain_hotloop", "gpuperf record --pc-sampling")):
        if name in times:
            md.write(f"| {what} | {times[name]:.2f} | {ratio(name, base)} |\n")
    # Per kernel, as the program timed it (CUDA events around its launches).
    def kernel_ms(name):
        try: text = open(f"{m}/{name}.out").read()
        except FileNotFoundError: return {}
        return {k: float(ms) for k, ms in re.findall(r"kernel=(\w+) ms=([\d.]+)", text)}
    base_ms, hot_ms = kernel_ms("plain"), kernel_ms("plain_hotloop")
    md.write("\n| kernel (ms per launch, program's events) | plain | metrics per kernel | metrics per NVTX range | record | record --pc-sampling |\n|---|---|---|---|---|---|\n")
    for k in ("copy", "fma", "latency", "hotloop"):
        cells = [base_ms.get(k) if k != "hotloop" else hot_ms.get(k),
                 kernel_ms("metrics").get(k), kernel_ms("ranges").get(k),
                 kernel_ms("record").get(k), kernel_ms("pcsampling").get(k)]
        md.write(f"| {k} | " + " | ".join("-" if c is None else f"{c:.3f}" for c in cells) + " |\n")
print(open(f"{m}/overhead.md").read())
print(f"verdict: {len(fails)} failed")
PY
  local verdict; verdict=$(grep -c '^FAIL' "$log")
  grep -E '^(ok|FAIL)' "$log" | sed 's/^/   /' >> "$results"

  # 6. Fixtures for CI (tests/data/metrics/h100/...).
  local fx=$m/fixtures
  mkdir -p "$fx"
  for name in kernel nvtx pc; do
    [[ -d $w/$name ]] || continue
    mkdir -p "$fx/$name"
    cp "$w/$name"/*.gpt "$fx/$name/" 2>/dev/null
    printf 'GPU: %s\nCUDA: %s\ncommand: %s\n' "$gpu" "$(sed -n 2p "$out/machine.txt")" \
      "$(case $name in kernel) echo "gpuperf metrics -- hw_bound --repeat 3";;
         nvtx) echo "gpuperf metrics --ranges nvtx -- hw_bound --nvtx --repeat 3";;
         pc) echo "gpuperf record --pc-sampling -- hw_bound --kernel hotloop --repeat 3";; esac)" \
      > "$fx/$name/PROVENANCE"
  done
  tar -C "$m" -czf "$m/fixtures.tar.gz" fixtures
  [[ ${#problems[@]} -eq 0 && $verdict -eq 0 ]] && note metrics PASS "$(tail -1 "$log")" ||
    note metrics FAIL "${problems[*]} $(grep -c '^FAIL' "$log") claims failed (metrics/results.txt)"
}
