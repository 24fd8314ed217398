#!/usr/bin/env python3
"""Checks what headless Chromium made of a gpuperf flame graph SVG.

From the DOM dump (after the page's script ran): the frame named by the fragment is
zoomed to full width, frames outside it are hidden, search matches are highlighted and
the "Matched" share equals the one computed from the folded stacks. From the screenshot
(PNG decoded here with zlib, no PIL): the highlight colour is on screen and the zoomed
frame's row is one colour across the whole width. From a page that frames the SVG at
1600 px and then 900 px wide (fit): the graph spans the window both times.

usage: flamegraph_browser_check.py dom|png ARGS (see main)
"""
import re
import struct
import sys
import zlib

HIGHLIGHT = (0xE6, 0x00, 0xE6)
failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr)


def expected_matched_percent(folded_path, pattern):
    regex = re.compile(pattern)
    total = matched = 0
    with open(folded_path, encoding="utf-8") as f:
        for line in f:
            stack, weight = line.rstrip("\n").rsplit(" ", 1)
            total += int(weight)
            if any(regex.search(frame) for frame in stack.split(";")):
                matched += int(weight)
    return 100.0 * matched / total


FRAME_RE = re.compile(
    r'<g class="f (\w)([^"]*)"[^>]*><rect x="([\d.]+)" y="(\d+)" width="([\d.]+)" '
    r'height="(\d+)"[^>]*fill="(#[0-9a-f]{6})"[^>]*/><text[^>]*>([^<]*)</text>')


def frames_of(dom):
    out = []
    for m in FRAME_RE.finditer(dom):
        out.append({"kind": m.group(1), "classes": m.group(2).split(), "x": float(m.group(3)),
                    "y": int(m.group(4)), "width": float(m.group(5)), "fill": m.group(7),
                    "label": m.group(8)})
    return out


def original_width(svg_path, name):
    """Width of the widest frame titled `name` in the SVG as written (before any zoom)."""
    with open(svg_path, encoding="utf-8") as f:
        svg = f.read()
    widths = [float(m.group(1)) for m in re.finditer(
        r"<title>" + re.escape(name) + r'</title><rect x="[\d.]+" y="\d+" width="([\d.]+)"', svg)]
    return max(widths) if widths else None


def check_dom(dom_path, svg_path, folded_path, zoom, search, hover):
    with open(dom_path, encoding="utf-8") as f:
        dom = f.read()
    if 'data-ready="1"' not in dom:
        fail("the page's script did not finish (no data-ready)")
    if 'data-zoom="%s"' % zoom not in dom:
        fail("svg root lacks data-zoom=%r" % zoom)
    frames = frames_of(dom)
    if len(frames) < 5:
        fail("only %d frames in the DOM dump" % len(frames))
        return None
    zoomed = [f for f in frames if "zoomed" in f["classes"]]
    if len(zoomed) != 1:
        fail("expected one zoomed frame, found %d" % len(zoomed))
        return None
    z = zoomed[0]
    if z["label"] != zoom:
        fail("zoomed frame reads %r, not %r" % (z["label"], zoom))
    if z["x"] != 10.0 or z["width"] != 1180.0:
        fail("zoomed frame spans x=%s width=%s, not the full width" % (z["x"], z["width"]))
    before = original_width(svg_path, zoom)
    if before is None or before >= 1000:
        fail("before zooming, %r was %s px wide: the test proves nothing" % (zoom, before))
    hidden = [f for f in frames if "hide" in f["classes"]]
    if not hidden:
        fail("zooming hid no frame")
    ancestors = [f for f in frames if "anc" in f["classes"]]
    if not ancestors or any(f["width"] != 1180.0 for f in ancestors):
        fail("ancestors of the zoomed frame are not kept at full width")
    visible_hl = [f for f in frames if "hl" in f["classes"] and "hide" not in f["classes"]]
    if not visible_hl:
        fail("search %r highlighted no visible frame" % search)
    for f in visible_hl:
        label = f["label"].rstrip("\u2026")
        if not re.search(search, f["label"]) and label and not f["label"].endswith("\u2026"):
            fail("frame %r is highlighted but does not match %r" % (f["label"], search))
    for f in frames:
        if "hl" not in f["classes"] and f["label"] and re.search(search, f["label"]):
            fail("frame %r matches %r but is not highlighted" % (f["label"], search))
    m = re.search(r'<text id="matched"[^>]*>Matched: ([\d.]+)% of total', dom)
    want = expected_matched_percent(folded_path, search)
    if not m:
        fail("no 'Matched: x% of total' text")
    elif abs(float(m.group(1)) - want) > 0.051:
        fail("matched %s%%, the folded stacks say %.2f%%" % (m.group(1), want))
    if hover:
        tip = re.search(r'<g id="tip"([^>]*)>(.*?)</g>', dom, re.S)
        if not tip or "hidden" in tip.group(1):
            fail("hovering %r showed no tooltip" % hover)
        else:
            text = re.sub(r"<[^>]+>", "|", tip.group(2))
            for needle in (hover, "GPU time:", "% of total", "Activities:"):
                if needle not in text:
                    fail("tooltip lacks %r: %s" % (needle, text))
    return z


def read_png(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6):
                raise ValueError("unsupported PNG: depth %d colour type %d" % (depth, colour))
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        filt, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if filt == 1:
                line[i] = (line[i] + a) & 0xFF
            elif filt == 2:
                line[i] = (line[i] + b) & 0xFF
            elif filt == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif filt == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def check_png(png_path, zoomed):
    width, height, rows = read_png(png_path)
    if width != 1200:
        fail("screenshot is %d px wide, expected 1200" % width)
    highlighted = sum(1 for row in rows for px in row if px == HIGHLIGHT)
    if highlighted < 1000:
        fail("only %d pixels in the highlight colour" % highlighted)
    fill = tuple(int(zoomed["fill"][i:i + 2], 16) for i in (1, 3, 5))
    y = zoomed["y"] + 1  # inside the frame, above its label
    if y >= height:
        fail("zoomed frame row %d is below the screenshot" % y)
        return
    row = rows[y][14:1186]
    off = [x + 14 for x, px in enumerate(row) if max(abs(px[i] - fill[i]) for i in range(3)) > 3]
    if off:
        fail("zoomed frame row y=%d is not %s everywhere: %d pixels differ (first at x=%d, %s)"
             % (y, zoomed["fill"], len(off), off[0], rows[y][off[0]]))
        return
    print("screenshot: %d highlighted pixels; zoomed row y=%d is %s across x=14..1185"
          % (highlighted, y, zoomed["fill"]))


def check_fit(dom_path):
    """The page's measurements of the SVG in a 1600 px, then a 900 px wide frame."""
    with open(dom_path, encoding="utf-8") as f:
        dom = f.read()
    rows = {m.group(1): {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", m.group(2))}
            for m in re.finditer(r"(wide|narrow) (window=.*)", dom)}
    for name, window in (("wide", 1600), ("narrow", 900)):
        row = rows.get(name)
        if row is None:
            fail("no %s measurement in the page (did the script run?): %s" % (name, dom[-400:]))
            continue
        if row["window"] != window or row["ready"] != 1:
            fail("%s: window %s, ready %s" % (name, row["window"], row["ready"]))
        if row["root_width"] < 0.95 * window:
            fail("%s: the graph spans %s px of a %d px window" % (name, row["root_width"], window))
        if row["viewbox"] != window or abs(row["root_attr"] - row["root_width"]) > 0.5:
            fail("%s: drawn for %s px (root frame %s px, shown %s px): scaled, not redrawn"
                 % (name, row["viewbox"], row["root_attr"], row["root_width"]))
        if row["right"] > window:
            fail("%s: frames reach x=%s, past the %d px window" % (name, row["right"], window))
        if row["labels"] < 5:
            fail("%s: only %d labels drawn" % (name, row["labels"]))
        print("%s: graph %s px of %d, rightmost frame edge %s, %d labels"
              % (name, row["root_width"], window, row["right"], row["labels"]))


def main(argv):
    # dom DOM SVG FOLDED ZOOM SEARCH [HOVER] | both DOM SVG FOLDED ZOOM SEARCH PNG | fit DOM
    mode = argv[1]
    if mode == "dom":
        check_dom(argv[2], argv[3], argv[4], argv[5], argv[6], argv[7] if len(argv) > 7 else "")
    elif mode == "both":
        zoomed = check_dom(argv[2], argv[3], argv[4], argv[5], argv[6], "")
        if zoomed is not None:
            check_png(argv[7], zoomed)
    elif mode == "fit":
        check_fit(argv[2])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
