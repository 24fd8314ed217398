# GPU check `ranks` (sourced by tests/gpu/run.sh; docs/multi-rank.md, docs/energy.md):
#  - with 2+ GPUs: a 2-rank torchrun DDP run (examples/pytorch_ddp.py, rank 1 sleeping 50 ms
#    a step) recorded in one command: one trace per rank, each knowing its rank; the report's
#    ranks section names rank 1 the straggler with a median delay of 50 ms +-10%, with
#    communication/compute/overlap figures; --split-by rank report; the merged timeline has a
#    process track per rank; report --insights has one straggler_rank finding naming rank 1
#    late by its CPU; a fixture with PROVENANCE under $out/ranks/ddp_fixture/;
#  - on any GPU: examples/power_pair (tensor-core burn, then a sleeping spin): the energy
#    section ranks tensor_burn above idle_spin in joules and in watts, and the power readings'
#    integral agrees with NVML's energy counter over the same stretch within +-10%.
# Leaves reports, timelines and flame graphs under $out/ranks/.

ranks_ddp() {
  local dir=$work/rec/ddp rdir=$out/ranks problems=()
  echo "== ranks: torchrun --nproc-per-node 2 pytorch_ddp.py --slow-rank 1 --delay-ms 50" | tee -a "$results"
  timeout 300 "$gp" record -o "$dir" --force -- torchrun --standalone --nproc-per-node 2 \
    "$src/examples/pytorch_ddp.py" --steps 30 --slow-rank 1 --delay-ms 50 \
    > "$work/ddp.out" 2> "$work/ddp.err"
  local rc=$?
  [[ $rc -eq 0 ]] || problems+=("record exit $rc: $(tail -2 "$work/ddp.err" | tr '\n' ' ')")
  grep -E "^gpuperf: |^  " "$work/ddp.err" | sed 's/^/   /' >> "$results"
  local traces; traces=$(ls "$dir"/*.gpt 2>/dev/null | wc -l)
  "$gp" dump "$dir" 2>/dev/null | grep '^rank ' | sed 's/^/   /' | tee -a "$results" > "$work/ddp.ranks"
  local rank_traces; rank_traces=$(grep -c ' rank=[01] ' "$work/ddp.ranks")
  [[ $rank_traces -eq 2 ]] || problems+=("$rank_traces traces with a rank, want 2 ($traces traces)")
  echo "   traces: $traces (torchrun's agent $([[ $traces -gt 2 ]] && echo 'has one too' || echo 'has none'))" \
    | tee -a "$results"
  "$gp" report "$dir" > "$rdir/ddp_report.txt" 2>&1 || problems+=("report failed")
  "$gp" report "$dir" --json -o "$rdir/ddp_report.json" 2>/dev/null
  "$gp" report "$dir" --split-by rank > "$rdir/ddp_report_by_rank.txt" 2>&1 || problems+=("--split-by rank failed")
  sed -n '/^Ranks/,/^$/p' "$rdir/ddp_report.txt" | head -30 | sed 's/^/   /' | tee -a "$results"
  grep -E 'straggler|clocks' "$rdir/ddp_report.txt" | sed 's/^/   /' | tee -a "$results"
  local verdict
  verdict=$(python3 - "$rdir/ddp_report.json" <<'PY'
import json, sys
try:
    ranks = json.load(open(sys.argv[1]))["ranks"]
except Exception as e:
    print(f"FAIL no ranks section ({e})"); sys.exit()
rows = [r for r in ranks["ranks"] if r["rank"] >= 0]
s = ranks["straggler"]
problems = []
if [r["rank"] for r in rows] != [0, 1]: problems.append(f"ranks {[r['rank'] for r in rows]}")
if any(r["comm_kernels"] < 30 or r["comm_ns"] == 0 or r["compute_ns"] == 0 for r in rows):
    problems.append("missing communication or compute time")
if not s or s["rank"] != 1: problems.append(f"straggler {s and s['rank']}, want rank 1")
elif abs(s["delay_median_ns"] / 50e6 - 1) > 0.10: problems.append(f"delay {s['delay_median_ns']/1e6:.1f} ms, want 50 +-10%")
figures = "; ".join(f"rank {r['rank']}: comm {r['comm_ns']/1e6:.1f} ms, compute {r['compute_ns']/1e6:.1f} ms, "
                    f"overlap {r['overlap_ns']/1e6:.2f} ms" for r in rows)
if s: figures += f"; straggler rank {s['rank']} median {s['delay_median_ns']/1e6:.2f} ms over {s['last_arrivals']}/{s['collectives']}"
print(("FAIL " + ", ".join(problems) + " | " if problems else "PASS ") + figures)
PY
)
  [[ $verdict == PASS* ]] || problems+=("${verdict#FAIL }")
  echo "   $verdict" | tee -a "$results"
  # The insight rules across ranks: straggler_rank names rank 1, late by its CPU (the sleep).
  "$gp" report "$dir" --insights --sections insights > "$rdir/ddp_insights.txt" 2>&1
  "$gp" report "$dir" --insights --json -o "$work/ddp_insights.json" 2>/dev/null
  grep -E '^  [0-9]+\. ' "$rdir/ddp_insights.txt" | cut -c1-200 | sed 's/^/   /' | tee -a "$results"
  python3 - "$work/ddp_insights.json" 2> "$work/ddp_insights.check" <<'PY' \
    || problems+=("straggler_rank: $(tail -1 "$work/ddp_insights.check")")
import json, sys
found = [f for f in json.load(open(sys.argv[1]))["insights"] if f["rule"] == "straggler_rank"]
assert len(found) == 1 and found[0]["finding"].startswith("Rank 1 ("), [f["finding"] for f in found]
assert "its CPU launched late" in found[0]["finding"], found[0]["finding"]
PY
  # The merged timeline: one process track per rank, named after it.
  "$gp" export "$dir" -o "$rdir/ddp.perfetto-trace" > /dev/null 2>&1 || problems+=("export failed")
  "$gp" export "$dir" -o "$work/ddp.json" > /dev/null 2>&1
  local tracks
  tracks=$(python3 -c '
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
print("|".join(sorted(e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name" and e["args"]["name"].startswith("rank "))))' "$work/ddp.json" 2>/dev/null)
  echo "   timeline process tracks: $tracks" | tee -a "$results"
  [[ $tracks == "rank 0 ("*", GPU 0)|rank 1 ("*", GPU 1)" ]] || problems+=("timeline tracks: $tracks")
  "$gp" flamegraph "$dir" --split-by rank -o "$rdir/ddp_by_rank.svg" > /dev/null 2>&1 || problems+=("flamegraph --split-by rank failed")
  # A fixture for CI: the rank traces and where they came from.
  mkdir -p "$rdir/ddp_fixture"
  cp "$dir"/*.gpt "$rdir/ddp_fixture/" 2>/dev/null
  printf 'GPU: %s\nGPUs: %s\nCUDA: %s\ntorch: %s\nkernel: %s\ncommand: gpuperf record -- torchrun --standalone --nproc-per-node 2 examples/pytorch_ddp.py --steps 30 --slow-rank 1 --delay-ms 50\nexample said:\n%s\n' \
    "$gpu" "$(nvidia-smi -L | wc -l)" "$(sed -n 2p "$out/machine.txt")" "$(sed -n 4p "$out/machine.txt")" \
    "$(uname -r)" "$(grep -h 'gpuperf-example:' "$work/ddp.out")" > "$rdir/ddp_fixture/PROVENANCE"
  note ranks "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-${verdict#PASS }}"
}

ranks_energy() {
  local name=power_pair rdir=$out/ranks problems=()
  record "$name" "" -- "$ex/power_pair" --seconds 3
  local dir=$work/rec/$name
  "$gp" report "$dir" --sections energy > "$rdir/power_pair_report.txt" 2>&1
  "$gp" report "$dir" --json -o "$rdir/power_pair_report.json" 2>/dev/null
  "$gp" flamegraph "$dir" --weight energy -o "$rdir/power_pair_energy.svg" 2> "$work/energy.flame.err" \
    || problems+=("flamegraph --weight energy failed: $(cat "$work/energy.flame.err")")
  sed 's/^/   /' "$rdir/power_pair_report.txt" | head -20 | tee -a "$results"
  "$gp" dump "$dir" 2>/dev/null | grep -E '# power_' | sed 's/^stat [^ ]* /   /' | sort -u >> "$results"
  local verdict
  verdict=$(python3 - "$rdir/power_pair_report.json" <<'PY'
import json, sys
try:
    e = json.load(open(sys.argv[1]))["energy"]
except Exception as ex:
    print(f"FAIL no energy section: no power readings? ({ex})"); sys.exit()
k = {row["display_name"]: row for row in e["kernels"]}
burn, spin = k.get("tensor_burn"), k.get("idle_spin")
d = e["devices"][0]
problems = []
if not burn or not spin: problems.append(f"kernels {sorted(k)}")
else:
    if not (burn["joules"] > spin["joules"] and burn["watts"] > 1.5 * spin["watts"]):
        problems.append("tensor_burn does not outrank idle_spin")
if d["counter_j"] is None: problems.append("NVML's energy counter was not read")
else:
    ratio = d["sampled_over_counter_j"] / d["counter_j"]
    if abs(ratio - 1) > 0.10: problems.append(f"readings/counter {ratio:.3f}, want 1 +-0.10")
figures = f"{d['source']} readings at {d['rate_hz']:.0f} Hz"
if burn and spin:
    figures += (f"; tensor_burn {burn['joules']:.1f} J ({burn['watts']:.0f} W), "
                f"idle_spin {spin['joules']:.1f} J ({spin['watts']:.0f} W)")
if d["counter_j"] is not None:
    figures += f"; readings {d['sampled_over_counter_j']:.1f} J vs NVML counter {d['counter_j']:.1f} J"
print(("FAIL " + ", ".join(problems) + " | " if problems else "PASS ") + figures)
PY
)
  [[ $verdict == PASS* ]] || problems+=("${verdict#FAIL }")
  echo "   $verdict" | tee -a "$results"
  note energy "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" "${problems[*]:-${verdict#PASS }}"
}

ranks_check() {
  mkdir -p "$out/ranks"
  local gpus; gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
  if [[ $gpus -ge 2 ]]; then
    ranks_ddp
  else
    echo "== ranks: $gpus GPU(s): the 2-rank DDP part needs 2 (nvidia-h200-x2); skipped" | tee -a "$results"
    note ranks SKIP "needs 2 GPUs, this machine has $gpus"
  fi
  ranks_energy
}
