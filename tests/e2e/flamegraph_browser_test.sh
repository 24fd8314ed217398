#!/usr/bin/env bash
# The flame graph SVG in a real browser (headless Chromium): the URL fragment makes the
# page's own script click a frame and run a search; the DOM dump must show the zoom and
# the highlight (and the matched share the folded stacks predict), and the screenshot's
# pixels must show the highlight colour and the zoomed frame across the full width.
source "$(dirname "$0")/lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $CHROMIUM ]]; then
  echo "SKIP: chromium is not installed (apt-get install chromium; scripts/install-deps.sh --test)"
  exit 77
fi
if ! command -v python3 >/dev/null; then
  echo "SKIP: python3 is not installed"
  exit 77
fi
CHECK="$SRC/tests/e2e/flamegraph_browser_check.py"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

browse() {
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
    --force-device-scale-factor=1 --user-data-dir="$(mktemp -d -p "$dir")" "$@" 2>"$dir/chromium.log"
}

# 1. The golden SVG of the model trace: known frames, known shares.
cp "$SRC/tests/golden/flamegraph/model.svg" "$dir/model.svg"
folded="$SRC/tests/golden/flamegraph/model.folded"
url="file://$dir/model.svg#zoom=Attention%3A%3Aforward&search=gemm"
browse --window-size=1200,800 --dump-dom "$url&hover=cudaLaunchKernel" > "$dir/hover.html" || fail "chromium --dump-dom failed"
python3 "$CHECK" dom "$dir/hover.html" "$dir/model.svg" "$folded" "Attention::forward" gemm \
  cudaLaunchKernel || fail "DOM checks (with hover) failed"
browse --window-size=1200,800 --dump-dom "$url" > "$dir/dom.html" || fail "chromium --dump-dom failed"
browse --screenshot="$dir/shot.png" --window-size=1200,800 "$url" >/dev/null ||
  fail "chromium --screenshot failed: $(tail -3 "$dir/chromium.log")"
[[ -s "$dir/shot.png" ]] || fail "no screenshot"
python3 "$CHECK" both "$dir/dom.html" "$dir/model.svg" "$folded" "Attention::forward" gemm \
  "$dir/shot.png" || fail "DOM and screenshot checks failed"
[[ -n ${GPUPERF_KEEP_SCREENSHOT:-} ]] && cp "$dir/shot.png" "$GPUPERF_KEEP_SCREENSHOT"

# 2. The graph takes the window's width and follows a resize: the SVG in a 1600 px wide
# frame, then the frame narrowed to 900 px; the page measures what the SVG drew.
cat > "$dir/resize.html" <<'HTML'
<!DOCTYPE html>
<html><body style="margin:0">
<iframe id="frame" src="model.svg" style="border:0; width:1600px; height:700px"></iframe>
<pre id="out"></pre>
<script>
function measure(name) {
  var frame = document.getElementById('frame');
  var doc = frame.contentDocument;
  var right = 0, labels = 0;
  doc.querySelectorAll('g.f:not(.hide) rect').forEach(function (r) {
    right = Math.max(right, r.getBoundingClientRect().right);
  });
  doc.querySelectorAll('g.f:not(.hide) text').forEach(function (t) {
    if (t.getComputedTextLength() > 0) labels++;
  });
  var svg = doc.documentElement;
  var root = doc.querySelector('g.f.r rect');
  // Drawn width and viewBox/attribute width: equal when the script redrew the frames,
  // apart when the browser only scaled the old drawing.
  return name + ' window=' + frame.clientWidth + ' ready=' + svg.getAttribute('data-ready') +
      ' root_width=' + root.getBoundingClientRect().width.toFixed(1) +
      ' root_attr=' + root.getAttribute('width') + ' viewbox=' + svg.viewBox.baseVal.width +
      ' right=' + right.toFixed(1) + ' labels=' + labels + '\n';
}
window.onload = function () {
  var out = document.getElementById('out');
  out.textContent = measure('wide');
  document.getElementById('frame').style.width = '900px';
  // The resize event comes with a later rendering of the frame, which a loaded machine
  // may not reach within Chromium's virtual time: wait for the browser's own event first,
  // then fire the same event on the frame's window so the page's handler is what is tested
  // (without a redraw the measurement shows the scaled old drawing).
  var frameWindow = document.getElementById('frame').contentWindow;
  var svg = frameWindow.document.documentElement;
  var waited = 0;
  (function poll() {
    if (svg.viewBox.baseVal.width !== 900 && waited < 3000) {
      if (waited === 1500) frameWindow.dispatchEvent(new Event('resize'));
      waited += 50;
      setTimeout(poll, 50);
    } else {
      out.textContent += measure('narrow');
    }
  })();
};
</script>
</body></html>
HTML
browse --allow-file-access-from-files --virtual-time-budget=10000 --window-size=1700,800 \
  --dump-dom "file://$dir/resize.html" > "$dir/resize.dom" || fail "chromium --dump-dom failed"
python3 "$CHECK" fit "$dir/resize.dom" || fail "the graph does not fit the window"

# 3. What the CLI writes for a synthetic trace: zoom into a CPU frame, search copies.
"$SYNTH" -o "$dir/t.gpt" --kernels 2000 >/dev/null || fail "synth failed"
"$GPUPERF" flamegraph "$dir/t.gpt" -o "$dir/t.svg" 2>/dev/null || fail "flamegraph failed"
"$GPUPERF" flamegraph "$dir/t.gpt" -o "$dir/t.folded" --min-width 0 2>/dev/null
browse --dump-dom "file://$dir/t.svg#zoom=main&search=cudaMemcpyAsync" > "$dir/t.html"
grep -q 'data-zoom="main"' "$dir/t.html" || fail "CLI SVG: no zoom on main"
grep -q 'class="f [a-z] hl' "$dir/t.html" || fail "CLI SVG: nothing highlighted"
grep -q 'Matched: [0-9.]*% of total' "$dir/t.html" || fail "CLI SVG: no matched share"

finish
