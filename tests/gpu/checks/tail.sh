# GPU check "tail" (sourced by tests/gpu/run.sh): record's own time after the program ends,
# at the launch rate the soak reaches (issue 31: at most 10 % of the run at 500 k kernels/s).
# launch_bound launches for 20 s from 16 threads on 4 streams under `gpuperf record`; a
# wrapper notes when the program's last line (its summary, printed just before it exits)
# reaches record's stdout and when record exits. The tail is the time between, the rate the
# program's own launches per second. Once more with --no-symbolize, to tell symbolization
# from the rest (draining, the summary's read of the trace).
# Writes $out/tail/: each run's stdout and stderr, and times.txt.
tail_check() {
  local dir=$out/tail
  mkdir -p "$dir"
  echo "== tail: record's time after launch_bound --seconds 20 --threads 16 --streams 4" |
    tee -a "$results"
  local verdict
  verdict=$(python3 - "$gp" "$ex/launch_bound" "$work/tail" "$dir" <<'PY'
import re, subprocess, sys, time
gp, prog, work, out = sys.argv[1:5]
rows = []
for mode, extra in (("symbolize", []), ("no-symbolize", ["--no-symbolize"])):
    cmd = [gp, "record", "-o", f"{work}-{mode}", "--force", *extra, "--",
           prog, "--seconds", "20", "--threads", "16", "--streams", "4"]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=open(f"{out}/{mode}.err", "w"),
                            text=True)
    last_line_at, summary = None, ""
    with open(f"{out}/{mode}.out", "w") as saved:
        for line in proc.stdout:
            saved.write(line)
            if line.startswith("gpuperf-example:"):
                last_line_at, summary = time.monotonic(), line
    proc.wait()
    end = time.monotonic()
    wall = float(re.search(r"wall_ms=([0-9.]+)", summary).group(1)) / 1e3 if summary else 0
    kernels = int(re.search(r"kernels=([0-9]+)", summary).group(1)) if summary else 0
    tail = end - last_line_at if last_line_at else float("nan")
    rows.append((mode, proc.returncode, kernels, wall, tail))
with open(f"{out}/times.txt", "w") as f:
    for mode, rc, kernels, wall, tail in rows:
        f.write(f"{mode}: exit {rc}, {kernels} kernels in {wall:.1f} s "
                f"({kernels / wall if wall else 0:,.0f}/s), tail {tail:.2f} s "
                f"({100 * tail / wall if wall else 0:.1f} % of the run)\n")
print(open(f"{out}/times.txt").read(), end="")
mode, rc, kernels, wall, tail = rows[0]
ok = rc == 0 and kernels > 0 and tail == tail and tail <= 0.10 * wall
print(("PASS" if ok else "FAIL") + f" tail {tail:.2f} s = {100 * tail / wall if wall else 0:.1f} % "
      f"of {wall:.1f} s at {kernels / wall if wall else 0:,.0f} kernels/s "
      f"(without symbolizing: {rows[1][4]:.2f} s)")
PY
)
  sed 's/^/   /' <<<"$verdict" | tee -a "$results"
  local last; last=$(tail -1 <<<"$verdict")
  case $last in
    PASS* | FAIL*) note tail "${last%% *}" "${last#* }" ;;
    *) note tail FAIL "no result: ${last:-the timing script failed}" ;;
  esac
}
