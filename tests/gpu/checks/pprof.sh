# GPU check "pprof" (sourced by tests/gpu/run.sh): a PyTorch program written to show four
# problems is recorded once, then
#   - its pprof export (gpuperf export -o x.pb.gz) is decoded here (a minimal protobuf
#     reader: the GPU machine has neither go nor protoc): GPU time and launches add up to
#     the report's totals, the kernel is the leaf, Python frames carry the script's file;
#   - gpuperf report --insights names each problem with the script line that causes it:
#     launch_bound (200 tiny adds per step), pageable_copies (a pageable 64 MiB upload per
#     step), memory_growth (16 MiB kept per step), sync_stalls (.item() then 2 ms of CPU).
# Writes $out/pprof/: the profile, the insights (text and JSON), the program.
pprof_check() {
  local dir=$out/pprof rec=$work/pprof_rec
  mkdir -p "$dir"
  cat > "$dir/insights_workload.py" <<'PY'
import time
import torch

dev = "cuda"
x = torch.randn(1024, 1024, device=dev)
host = torch.randn(4096, 4096)  # 64 MiB of pageable host memory
g = torch.empty_like(host, device=dev)
kept = []
for step in range(30):
    y = torch.zeros(16, device=dev)
    for _ in range(200):
        y = y + 1  # marker: launch_bound
    g.copy_(host)  # marker: pageable_copies
    # 16 MiB kept per step: PyTorch's caching allocator asks cudaMalloc for each one.
    kept.append(torch.empty(4 * 1024 * 1024, device=dev))  # marker: memory_growth
    loss = (x @ x).sum().item()  # marker: sync_stalls
    time.sleep(0.002)
print("gpuperf-example: name=insights_workload steps=30")
PY
  rm -rf "$rec"
  if ! timeout 300 "$gp" record -o "$rec" --force -- python3 "$dir/insights_workload.py" \
      > "$dir/record.out" 2> "$dir/record.err"; then
    note pprof FAIL "record failed: $(tail -1 "$dir/record.err")"
    return
  fi
  "$gp" export "$rec" -o "$dir/profile.pb.gz" > "$dir/export.out" 2>&1
  "$gp" report "$rec" --format json --sections summary > "$dir/summary.json" 2>/dev/null
  "$gp" report "$rec" --insights --sections insights > "$dir/insights.txt" 2>&1
  "$gp" report "$rec" --insights --sections insights --format json > "$dir/insights.json" 2>/dev/null
  local verdict
  verdict=$(python3 - "$dir" <<'PY'
import gzip, json, os, sys
d = sys.argv[1]

def varint(b, i):
    x = s = 0
    while True:
        c = b[i]; i += 1; x |= (c & 0x7F) << s; s += 7
        if c < 0x80: return x, i

def fields(b):
    i, out = 0, []
    while i < len(b):
        key, i = varint(b, i)
        f, w = key >> 3, key & 7
        if w == 0: v, i = varint(b, i)
        elif w == 2:
            n, i = varint(b, i); v = b[i:i + n]; i += n
        elif w == 1: v = b[i:i + 8]; i += 8
        else: v = b[i:i + 4]; i += 4
        out.append((f, w, v))
    return out

def ints(entries, field):  # a repeated varint field, packed or not
    out = []
    for f, w, v in entries:
        if f != field: continue
        if w == 0: out.append(v)
        else:
            i = 0
            while i < len(v):
                x, i = varint(v, i); out.append(x)
    return out

problems = []
p = fields(gzip.open(os.path.join(d, "profile.pb.gz")).read())
strings = [v.decode() for f, w, v in p if f == 6]
types = [strings[ints(fields(v), 1)[0]] for f, w, v in p if f == 1]
functions = {}
for f, w, v in p:
    if f == 5:
        fn = fields(v)
        functions[ints(fn, 1)[0]] = (strings[(ints(fn, 2) or [0])[0]], strings[(ints(fn, 4) or [0])[0]])
locations = {}
for f, w, v in p:
    if f == 4:
        loc = fields(v)
        lines = [fields(l) for g, _, l in loc if g == 4]
        locations[ints(loc, 1)[0]] = [(functions[ints(l, 1)[0]], (ints(l, 2) or [0])[0]) for l in lines]
samples = [fields(v) for f, w, v in p if f == 2]
gpu = sum(ints(s, 2)[0] for s in samples)
launches = sum(ints(s, 2)[1] for s in samples)
summary = json.load(open(os.path.join(d, "summary.json")))["summary"]
if types != ["gpu_time", "launches", "cpu_launch_time"]: problems.append(f"sample types {types}")
if gpu != summary["gpu_ns"]: problems.append(f"gpu_time {gpu} != report {summary['gpu_ns']}")
want = summary["kernels"] + summary["memcpys"] + summary["memsets"]
if launches != want: problems.append(f"launches {launches} != report {want}")
leaves = {locations[ints(s, 1)[0]][0][0][0] for s in samples}
if not all(name.startswith("[gpu] ") for name in leaves): problems.append(f"leaves {sorted(leaves)[:3]}")
py = [fn for fn in functions.values() if fn[1].endswith("insights_workload.py")]
if not py: problems.append("no Python function of the script")

script = open(os.path.join(d, "insights_workload.py")).read().splitlines()
line = {l.split("marker: ")[1]: i + 1 for i, l in enumerate(script) if "marker: " in l}
found = json.load(open(os.path.join(d, "insights.json")))["insights"]
for rule in ("launch_bound", "pageable_copies", "memory_growth", "sync_stalls"):
    mine = [f for f in found if f["rule"] == rule]
    if not mine:
        problems.append(f"no {rule}")
    elif rule != "sync_stalls" and not any(f"insights_workload.py:{line[rule]})" in fr
                                           for f in mine for fr in f["stack"]):
        problems.append(f"{rule} stack lacks line {line[rule]}: {mine[0]['stack']}")
print("PASS" if not problems else "FAIL " + "; ".join(problems))
print(f"{len(samples)} samples, gpu_time {gpu} ns; insights: " +
      ", ".join(f"{f['rule']} {f['at_stake']['ns'] / 1e6:.1f} ms" for f in found))
PY
)
  local detail; detail=$(tail -1 <<<"$verdict")
  echo "pprof: $verdict" >> "$results"
  if [[ $(head -1 <<<"$verdict") == PASS ]]; then
    note pprof PASS "$detail"
  else
    note pprof FAIL "$(head -1 <<<"$verdict" | cut -c6-) ($detail)"
  fi
}
