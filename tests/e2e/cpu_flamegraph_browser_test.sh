#!/usr/bin/env bash
# The unified flame graph (`flamegraph --weight all`: GPU, on-CPU and off-CPU time under the
# same frames) in headless Chromium, as flamegraph_browser_test.sh does for GPU graphs: a
# recording of a process tree with GPU work (the fake CUDA app) and CPU work (cpu_split)
# is zoomed and searched through the URL fragment; the DOM must show the zoom, the
# highlight and the matched share the folded stacks predict, the tooltip must split a
# frame's time into GPU, on-CPU and off-CPU, and the three kinds of leaf must have three
# colours. Needs root with BPF (the recording), chromium and python3: skipped without.
source "$(dirname "$0")/lib.sh"
bin=$GPUPERF_BINARY_DIR
app=$bin/tests/cpu/cpu_split
fake_app=$bin/tests/fakes/fake_cuda_app
lib=$bin/src/inject/libgpuperf_inject.so
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[[ -n $CHROMIUM ]] || { echo "SKIP: chromium is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
[[ -x $app && -x $fake_app && -f $lib ]] || { echo "SKIP: test programs not built"; exit 77; }
[[ $(id -u) -eq 0 ]] || { echo "SKIP: the CPU profiler needs root here"; exit 77; }
CHECK="$SRC/tests/e2e/flamegraph_browser_check.py"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

"$GPUPERF" record -o "$dir/rec" --inject-lib "$lib" --cpu --off-cpu --freq 499 -- \
  bash -c "'$app' 1000 200 150; '$fake_app' threads 2 20000" > "$dir/out" 2> "$dir/err"
if ! grep -q "^gpuperf: CPU: " "$dir/err"; then
  echo "SKIP: the CPU profiler did not run: $(grep -m1 gpuperf: "$dir/err")"; exit 77
fi
# Every frame drawn (--min-width 0), so the matched share can equal the folded stacks' one.
"$GPUPERF" flamegraph --weight all --min-width 0 -o "$dir/all.svg" "$dir/rec" 2>/dev/null ||
  fail "flamegraph --weight all"
"$GPUPERF" flamegraph --weight all --min-width 0 -o "$dir/all.folded" "$dir/rec" 2>/dev/null
grep -q '\[GPU0\] ' "$dir/all.folded" || fail "no GPU leaf in the unified graph"
grep -q ';\[cpu\] ' "$dir/all.folded" || fail "no [cpu] leaf in the unified graph"
grep -q ';\[off-cpu\] ' "$dir/all.folded" || fail "no [off-cpu] leaf in the unified graph"

browse() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
    --force-device-scale-factor=1 --user-data-dir="$(mktemp -d -p "$dir")" "$@" 2>"$dir/chromium.log"
}

# Zoom into the CPU-heavy function, search the three kinds of time's leaves and waits.
# Its on-CPU leaf is what stays visible there: its off-CPU time is only what preemption
# took, which a quiet machine makes narrower than a pixel.
search='\[cpu\]|\[off-cpu\]|GPU sync'
url="file://$dir/all.svg#zoom=cpu_split_hot&search=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$search")"
browse --window-size=1200,800 --dump-dom "$url" > "$dir/dom.html" || fail "chromium --dump-dom failed"
python3 "$CHECK" dom "$dir/dom.html" "$dir/all.svg" "$dir/all.folded" cpu_split_hot "$search" ||
  fail "zoom and search checks failed"

# The tooltip of a frame with all three kinds of time under it splits them.
root_frame=$(head -1 "$dir/all.folded" | cut -d';' -f1)
browse --window-size=1200,800 --dump-dom \
  "file://$dir/all.svg#hover=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$root_frame")" \
  > "$dir/hover.html"
python3 - "$dir/hover.html" "$root_frame" <<'PY' || fail "tooltip does not split the time"
import re, sys
dom, name = open(sys.argv[1], encoding="utf-8").read(), sys.argv[2]
tip = re.search(r'<g id="tip"([^>]*)>(.*?)</g>', dom, re.S)
assert tip and "hidden" not in tip.group(1), "no tooltip shown"
text = re.sub(r"<[^>]+>", "|", tip.group(2))
for needle in (name, "Total time:", "% of total", "GPU ", "on-CPU ", "off-CPU "):
    assert needle in text, "tooltip lacks %r: %s" % (needle, text)
print("tooltip: " + " ".join(t for t in text.split("|") if t.strip()))
PY

# Three kinds of leaf, three colours, each the same wherever it is drawn.
python3 - "$dir/all.svg" <<'PY' || fail "leaf colours"
import re, sys
svg = open(sys.argv[1], encoding="utf-8").read()
fills = {}
for kind, fill in re.findall(r'<g class="f ([uok])"[^>]*><title>[^<]*</title><rect [^>]*fill="(#[0-9a-f]{6})"', svg):
    fills.setdefault(kind, set()).add(fill)
assert set(fills) == {"u", "o", "k"}, "leaf kinds drawn: %s" % sorted(fills)
assert len(fills["u"]) == 1 and len(fills["o"]) == 1, fills
assert not (fills["u"] & fills["k"]) and not (fills["o"] & fills["k"]) and fills["u"] != fills["o"], fills
print("leaf colours: on-CPU %s, off-CPU %s, GPU kernels %s" % (fills["u"], fills["o"], sorted(fills["k"])[:3]))
PY
finish
