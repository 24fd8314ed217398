# GPU check `nccl` (sourced by tests/gpu/run.sh; docs/multi-rank.md, "NCCL's profiler plugin"):
# with 2+ GPUs, `gpuperf record -- torchrun --nproc-per-node 2 examples/pytorch_ddp.py` (NCCL
# multicast off) and NCCL loads gpuperf as its profiler plugin. Asserts:
#  - each rank's trace has an nccl_comm record (NCCL 2.28 used the v5 table) and collectives;
#  - every collective has a known size (count > 0, a known datatype: bytes = count x size), and
#    the commonest all-reduce is DDP's gradient bucket, 197,120 fp32 = 788,480 bytes, at least
#    once a step (33 steps);
#  - both ranks have the same (communicator, operation, sequence number) set, with the same
#    sizes per sequence number;
#  - the report matched instances by sequence number and joined every collective to a kernel
#    (ranks.nccl.unjoined == 0), and its text has the NCCL table.
# Leaves the report, its JSON and the dump's NCCL records under $out/nccl/.

nccl_check() {
  local dir=$work/rec/nccl ndir=$out/nccl problems=()
  mkdir -p "$ndir"
  local gpus; gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  if [[ $gpus -lt 2 ]]; then
    echo "== nccl: $gpus GPU(s): needs 2 (nvidia-h200-x2); skipped" | tee -a "$results"
    note nccl SKIP "needs 2 GPUs, this machine has $gpus"
    return
  fi
  echo "== nccl: the profiler plugin under torchrun --nproc-per-node 2 pytorch_ddp.py" | tee -a "$results"
  NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 NCCL_DEBUG=INFO \
    NCCL_DEBUG_SUBSYS=INIT,ENV timeout 300 "$gp" record -o "$dir" --force -- torchrun --standalone \
    --nproc-per-node 2 "$src/examples/pytorch_ddp.py" --steps 30 > "$work/nccl.out" 2> "$work/nccl.err"
  local rc=$?
  [[ $rc -eq 0 ]] || problems+=("record exit $rc: $(tail -2 "$work/nccl.err" | tr '\n' ' ')")
  grep -hiE 'profiler' "$work/nccl.out" "$work/nccl.err" | sort -u | head -6 | cut -c1-200 \
    | sed 's/^/   /' | tee -a "$results" > "$ndir/nccl_log.txt"
  "$gp" dump "$dir" 2>/dev/null | grep -E '^(nccl_comm|nccl_collective|rank) |# nccl_' > "$ndir/nccl_records.txt"
  "$gp" report "$dir" > "$ndir/report.txt" 2>&1 || problems+=("report failed")
  "$gp" report "$dir" --json -o "$ndir/report.json" 2>/dev/null
  sed -n '/^  *NCCL  *Communicator/,/^$/p' "$ndir/report.txt" | head -12 | sed 's/^/   /' | tee -a "$results"
  local verdict
  verdict=$(python3 - "$ndir/nccl_records.txt" "$ndir/report.json" <<'PY'
import collections, json, re, sys
fields = lambda line: {k: v.strip('"') for k, v in re.findall(r'(\w+)=("[^"]*"|\S+)', line)}
comms, colls, rank_of, snapshots = [], collections.defaultdict(list), {}, {}
for line in open(sys.argv[1]):
    kind = line.split(" ", 1)[0]
    f = fields(line)
    if kind == "rank": rank_of[f["pid"]] = int(f["rank"])
    elif kind == "nccl_comm": comms.append(f)
    elif kind == "nccl_collective": colls[f["pid"]].append(f)
    elif kind == "stat" and "# nccl_" in line:  # cumulative snapshots: each process's largest
        key = (f["pid"], line.rsplit("# ", 1)[1].strip())
        snapshots[key] = max(snapshots.get(key, 0), int(f["value"]))
stats = collections.Counter()
for (pid, name), value in snapshots.items(): stats[name] += value
problems = []
pids = sorted(p for p, r in rank_of.items() if r >= 0)
if len(pids) != 2: problems.append(f"{len(pids)} rank traces")
comm_pids = {c["pid"] for c in comms}
if not set(pids) <= comm_pids: problems.append("NCCL did not load the plugin on every rank (no nccl_comm)")
if any(c["plugin_version"] != "5" for c in comms): problems.append(f"plugin versions {sorted({c['plugin_version'] for c in comms})}")
seqs = {}
for pid in pids:
    cs = colls.get(pid, [])
    if not cs: problems.append(f"rank {rank_of[pid]}: no collectives"); continue
    bad = [c for c in cs if int(c["count"]) == 0 or int(c["type_size"]) == 0]
    if bad: problems.append(f"rank {rank_of[pid]}: {len(bad)} collectives without a size, e.g. {bad[0]}")
    sizes = collections.Counter(int(c["count"]) * int(c["type_size"]) for c in cs if c["func"] == "AllReduce")
    common, times = sizes.most_common(1)[0] if sizes else (0, 0)
    if common != 197120 * 4 or times < 33:
        problems.append(f"rank {rank_of[pid]}: commonest all-reduce {common} bytes x{times}, want 788480 x>=33")
    seqs[pid] = {(c["comm_hash"], c["func"], int(c["seq"])): int(c["count"]) * int(c["type_size"]) for c in cs}
if len(seqs) == 2:
    a, b = seqs.values()
    if set(a) != set(b): problems.append(f"sequence numbers differ: {len(set(a) ^ set(b))} on one rank only")
    elif any(a[k] != b[k] for k in a): problems.append("sizes differ for one sequence number")
try:
    n = json.load(open(sys.argv[2]))["ranks"]["nccl"]
    if not n["matched_by_sequence"]: problems.append("report did not match by sequence number")
    if n["unjoined"]: problems.append(f"{n['unjoined']} collectives not joined to a kernel")
    ar = [r for r in n["collectives"] if r["func"] == "AllReduce"]
    figures = "; ".join(f"{r['func']} x{r['instances']} {r['bytes']} B {r['time_ns']/1e6:.2f} ms "
                        f"algbw {r['algbw_gbps']} busbw {r['busbw_gbps']} GB/s ({r['algorithms']})"
                        for r in n["collectives"][:4])
except Exception as e:
    problems.append(f"no NCCL part in the report ({e})"); figures = ""
total = sum(len(v) for v in colls.values())
if stats["nccl_collectives"]:
    figures += f"; plugin {stats['nccl_plugin_ns'] / stats['nccl_collectives']:.0f} ns per collective over {total}"
if stats["nccl_collectives_dropped"] or stats["nccl_unfinished"]:
    problems.append(f"dropped {stats['nccl_collectives_dropped']}, unfinished {stats['nccl_unfinished']}")
print(("FAIL " + ", ".join(problems) + " | " if problems else "PASS ") + figures)
PY
)
  [[ $verdict == PASS* ]] || problems+=("${verdict#FAIL }")
  echo "   $verdict" | tee -a "$results"
  note nccl "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" "${problems[*]:-${verdict#PASS }}"
}
