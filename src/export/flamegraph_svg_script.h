// The script inside every flame graph SVG (written for gpuperf; no third-party code).
// It reads the frames the exporter drew (class "f", data-o/-v/-t/-n attributes, and
// data-c/-w, on- and off-CPU time, in graphs with CPU samples) and adds:
// hover tooltips, click to zoom (ancestors stay, full width), regex search with highlight
// and the matched share, reset, and control from the URL fragment:
//   flame.svg#zoom=<frame name>&search=<regex>[&hover=<frame name>]
// The fragment zooms by dispatching a real click on the widest frame of that name, so a
// headless browser test exercises the same path as a user. Every state change rewrites
// the fragment, so a zoomed, searched view can be bookmarked or shared.
#pragma once

#include <string_view>

namespace gpuperf {

inline constexpr std::string_view kFlamegraphScript = R"JS(
(function () {
  'use strict';
  var svg = document.documentElement;
  var NS = 'http://www.w3.org/2000/svg';
  var L = JSON.parse(svg.getAttribute('data-layout'));
  var KIND = {r: 'all activity', x: 'context', c: 'CPU frame', a: 'launch API',
              g: 'CUDA graph', k: 'GPU kernel', m: 'memcpy', s: 'memset', p: 'Python frame',
              e: 'kernel function', u: 'on-CPU time', o: 'off-CPU time', w: 'waiting for the GPU'};
  var WEIGHT = {time: 'GPU time', count: 'Activities', cpu: 'On-CPU time', offcpu: 'Off-CPU time',
                all: 'Total time'};
  var frames = [];
  var root = null;
  var zoomed = null;
  var pattern = '';
  var charWidth = 0;

  function $(id) { return document.getElementById(id); }

  function formatNs(ns) {
    function sig(v, unit) {
      return (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + ' ' + unit;
    }
    if (ns < 1e3) return ns + ' ns';
    if (ns < 1e6) return sig(ns / 1e3, '\u00b5s');
    if (ns < 1e9) return sig(ns / 1e6, 'ms');
    return sig(ns / 1e9, 's');
  }
  function formatCount(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }
  function percent(part, whole) {
    return whole > 0 ? (100 * part / whole).toFixed(part === whole ? 0 : 1) + '%' : '0%';
  }

  function measureCharWidth() {
    var probe = document.createElementNS(NS, 'text');
    probe.setAttribute('class', 'probe');
    probe.textContent = 'MMMMMMMMMMMMMMMMMMMM';
    svg.appendChild(probe);
    var w = probe.getComputedTextLength ? probe.getComputedTextLength() / 20 : 0;
    svg.removeChild(probe);
    return w > 0 ? w : L.charWidth;
  }

  // The name with its leftmost part dropped: a GPU frame's "[GPU<n>] " prefix, then a
  // signature's return type or one namespace/class qualifier at a time; '' when nothing more can go
  // (the argument list is never entered). The same rule as the exporter's DropLeft().
  function dropLeft(name) {
    var gpu = /^\[GPU[0-9]+\] (?=.)/.exec(name);
    if (gpu) return name.substring(gpu[0].length);
    var depth = 0;
    for (var i = 0; i + 1 < name.length; i++) {
      var c = name.charAt(i);
      if (c === '(' && depth === 0 && name.substring(i, i + 21) !== '(anonymous namespace)') break;
      if (c === '<' || c === '(' || c === '[') depth++;
      if ((c === '>' || c === ')' || c === ']') && depth > 0) depth--;
      if (depth !== 0) continue;
      if (c === ' ' && name.indexOf('(', i) >= 0) return name.substring(i + 1);
      if (c === ':' && name.charAt(i + 1) === ':' && i + 2 < name.length) return name.substring(i + 2);
    }
    return '';
  }

  // The label that fits `width` pixels: the whole name, else parts dropped from the left
  // until it fits, else that cut at the end with an ellipsis (the tooltip has it all).
  function fitLabel(name, width) {
    var chars = Math.floor((width - 2 * L.textPad) / charWidth);
    if (chars >= name.length) return name;
    if (chars < 3) return '';
    for (var shorter = dropLeft(name); shorter; shorter = dropLeft(name)) {
      name = shorter;
      if (chars >= name.length) return name;
    }
    return name.substring(0, chars - 1) + '\u2026';
  }

  // ---- window width ----
  // The drawing takes the window's width: the viewBox follows the rendered width (no
  // scaling), the anchored header and footer items move, and the frames are laid out again.
  function fitWindow() {
    var width = Math.max(320, Math.floor(svg.getBoundingClientRect().width));
    if (width === L.width) return;
    L.width = width;
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + L.height);
    var anchored = document.querySelectorAll('[data-anchor]');
    for (var i = 0; i < anchored.length; i++) {
      var a = anchored[i].getAttribute('data-anchor');
      var x = a === 'middle' ? width / 2 : width - L.pad - Number(a);
      anchored[i].setAttribute('x', x.toFixed(0));
    }
    layout();
  }

  function rowY(depth) {
    return L.inverted ? L.top + depth * L.row : L.top + (L.rows - 1 - depth) * L.row;
  }

  function setClass(el, name, on) {
    if (on) el.classList.add(name); else el.classList.remove(name);
  }

  // ---- zoom ----
  function layout() {
    var z = zoomed || root;
    var span = L.width - 2 * L.pad;
    var scale = z.v > 0 ? span / z.v : 0;
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      var inside = f.d >= z.d && f.o >= z.o && f.o + f.v <= z.o + z.v;
      var ancestor = f.d < z.d && f.o <= z.o && f.o + f.v >= z.o + z.v;
      var x, w;
      if (ancestor) {
        x = L.pad;
        w = span;
      } else {
        x = L.pad + (f.o - z.o) * scale;
        w = f.v * scale;
      }
      var visible = (inside || ancestor) && w >= 0.3;
      setClass(f.g, 'hide', !visible);
      setClass(f.g, 'anc', ancestor && zoomed !== null);
      setClass(f.g, 'zoomed', f === zoomed);
      if (!visible) continue;
      f.rect.setAttribute('x', x.toFixed(1));
      f.rect.setAttribute('width', w.toFixed(1));
      if (f.text) {
        f.text.setAttribute('x', (x + L.textPad).toFixed(1));
        f.text.textContent = fitLabel(f.name, w);
      }
    }
    setClass($('reset'), 'hide', zoomed === null);
    if (zoomed) svg.setAttribute('data-zoom', zoomed.name); else svg.removeAttribute('data-zoom');
  }

  function zoom(f) {
    zoomed = f && f !== root ? f : null;
    layout();
    updateMatched();
    saveState();
  }

  // ---- search ----
  function search(text) {
    pattern = text || '';
    var re = null;
    $('matched').classList.remove('bad');
    if (pattern) {
      try {
        re = new RegExp(pattern);
      } catch (e) {
        $('matched').textContent = 'invalid regex';
        $('matched').classList.add('bad');
        pattern = '';
      }
    }
    for (var i = 0; i < frames.length; i++) {
      var f = frames[i];
      setClass(f.g, 'hl', re !== null && f !== root && re.test(f.name));
    }
    if (re === null && !$('matched').classList.contains('bad')) $('matched').textContent = '';
    if (re !== null) updateMatched();
    if (re !== null) svg.setAttribute('data-search', pattern); else svg.removeAttribute('data-search');
    saveState();
  }

  // The share of the total under matched frames; nested matches count once.
  function updateMatched() {
    if (!pattern) return;
    var spans = [];
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].g.classList.contains('hl')) spans.push([frames[i].o, frames[i].o + frames[i].v]);
    }
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var sum = 0, end = -1;
    for (var j = 0; j < spans.length; j++) {
      var s = Math.max(spans[j][0], end);
      if (spans[j][1] > s) sum += spans[j][1] - s;
      end = Math.max(end, spans[j][1]);
    }
    var text = 'Matched: ' + percent(sum, root.v) + ' of total';
    if (L.weight === 'count') text += ' (' + formatCount(sum) + ' activities)';
    else text += ' (' + formatNs(sum) + ')';
    $('matched').textContent = text;
    svg.setAttribute('data-matched', (root.v > 0 ? 100 * sum / root.v : 0).toFixed(1));
  }

  // ---- tooltip ----
  function showTip(f, evt) {
    var tip = $('tip');
    // The full name, wrapped at 110 characters: a label may show only a part of it.
    var lines = [];
    for (var at = 0; at < f.name.length || at === 0; at += 110) lines.push(f.name.substring(at, at + 110));
    var nameLines = lines.length;
    lines.push(KIND[f.kind] || '');
    var view = zoomed || root;
    var share = percent(f.v, root.v) + ' of total';
    if (zoomed && f.d >= zoomed.d) share += ', ' + percent(f.v, view.v) + ' of zoomed frame';
    if (L.cpu) {
      // Recordings with CPU samples: the width, then what it is made of.
      var width = L.weight === 'count' ? formatCount(f.v) : formatNs(f.v);
      lines.push(WEIGHT[L.weight] + ': ' + width + ' (' + share + ')');
      lines.push('GPU ' + formatNs(f.t) + ' \u00b7 on-CPU ' + formatNs(f.c) + ' \u00b7 off-CPU ' +
                 formatNs(f.w));
      if (f.n > 0) lines.push('GPU activities: ' + formatCount(f.n));
    } else {
      lines.push('GPU time: ' + formatNs(f.t) + (L.weight === 'time' ? ' (' + share + ')' : ''));
      lines.push('Activities: ' + formatCount(f.n) + (L.weight === 'count' ? ' (' + share + ')' : ''));
      if (f.n > 0) lines.push('Average: ' + formatNs(Math.round(f.t / f.n)));
    }
    var text = tip.querySelector('text');
    while (text.firstChild) text.removeChild(text.firstChild);
    for (var i = 0; i < lines.length; i++) {
      var line = document.createElementNS(NS, 'tspan');
      line.setAttribute('x', '8');
      line.setAttribute('dy', i === 0 ? '16' : '16');
      if (i < nameLines) line.setAttribute('class', 'tip-name');
      line.textContent = lines[i];
      text.appendChild(line);
    }
    tip.removeAttribute('visibility');
    var box = text.getBBox();
    var w = box.width + 16, h = box.height + 10;
    var rect = tip.querySelector('rect');
    rect.setAttribute('width', w.toFixed(0));
    rect.setAttribute('height', h.toFixed(0));
    var p = svg.createSVGPoint();
    p.x = evt.clientX;
    p.y = evt.clientY;
    var ctm = svg.getScreenCTM();
    if (ctm) p = p.matrixTransform(ctm.inverse());
    var x = p.x + 14, y = p.y + 18;
    if (x + w > L.width - 4) x = Math.max(4, p.x - w - 10);
    if (y + h > L.height - 4) y = Math.max(4, p.y - h - 10);
    tip.setAttribute('transform', 'translate(' + x.toFixed(0) + ',' + y.toFixed(0) + ')');
  }
  function hideTip() { $('tip').setAttribute('visibility', 'hidden'); }

  // ---- URL fragment ----
  function readState() {
    var state = {};
    var hash = location.hash.replace(/^#/, '');
    if (!hash) return state;
    hash.split('&').forEach(function (part) {
      var eq = part.indexOf('=');
      if (eq < 0) return;
      try {
        state[part.substring(0, eq)] = decodeURIComponent(part.substring(eq + 1).replace(/\+/g, ' '));
      } catch (e) { /* a malformed fragment is ignored */ }
    });
    return state;
  }
  var applying = false;
  function saveState() {
    if (applying) return;
    var parts = [];
    if (zoomed) parts.push('zoom=' + encodeURIComponent(zoomed.name));
    if (pattern) parts.push('search=' + encodeURIComponent(pattern));
    try {
      history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname);
    } catch (e) { /* file:// in some browsers: the view still works */ }
  }
  function widestNamed(name) {
    var best = null;
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].name === name && (best === null || frames[i].v > best.v)) best = frames[i];
    }
    return best;
  }
  function applyState() {
    var state = readState();
    applying = true;
    if (state.zoom !== undefined) {
      var f = widestNamed(state.zoom);
      if (f) f.g.dispatchEvent(new MouseEvent('click', {bubbles: true, cancelable: true, view: window}));
    } else if (zoomed) {
      zoom(null);
    }
    var text = state.search || '';
    $('search').value = text;
    search(text);
    if (state.hover !== undefined) {
      // Shows the tooltip of a frame as if the pointer rested on its middle.
      var h = widestNamed(state.hover);
      if (h && !h.g.classList.contains('hide')) {
        var r = h.rect.getBoundingClientRect();
        h.g.dispatchEvent(new MouseEvent('mousemove', {bubbles: true, view: window,
            clientX: r.left + r.width / 2, clientY: r.top + r.height / 2}));
      }
    }
    applying = false;
  }

  // ---- setup ----
  function init() {
    charWidth = measureCharWidth();
    var groups = document.querySelectorAll('g.f');
    for (var i = 0; i < groups.length; i++) {
      var g = groups[i];
      var title = g.querySelector('title');
      var rect = g.querySelector('rect');
      var f = {
        g: g, rect: rect, text: g.querySelector('text'),
        name: title ? title.textContent : '',
        kind: g.getAttribute('class').split(' ')[1] || '',
        o: Number(g.getAttribute('data-o')), v: Number(g.getAttribute('data-v')),
        t: Number(g.getAttribute('data-t')), n: Number(g.getAttribute('data-n')),
        c: Number(g.getAttribute('data-c') || 0), w: Number(g.getAttribute('data-w') || 0),
        d: Number(g.getAttribute('data-d'))
      };
      // Our tooltip replaces the browser's plain one.
      if (title) g.removeChild(title);
      if (f.kind === 'r') root = f;
      frames.push(f);
      (function (f) {
        g.addEventListener('click', function (evt) { evt.stopPropagation(); zoom(f); });
        g.addEventListener('mousemove', function (evt) { showTip(f, evt); });
        g.addEventListener('mouseleave', hideTip);
      })(f);
    }
    if (!root) return;
    $('reset').addEventListener('click', function () { zoom(null); });
    var input = $('search');
    input.addEventListener('input', function () { search(input.value); });
    input.addEventListener('keydown', function (evt) {
      if (evt.key === 'Escape') { input.value = ''; search(''); input.blur(); }
    });
    document.addEventListener('keydown', function (evt) {
      if ((evt.ctrlKey || evt.metaKey) && evt.key === 'f' || evt.key === '/' && evt.target !== input) {
        evt.preventDefault();
        input.focus();
        input.select();
      } else if (evt.key === 'Escape' && evt.target !== input) {
        zoom(null);
      }
    });
    window.addEventListener('hashchange', applyState);
    window.addEventListener('resize', fitWindow);
    svg.setAttribute('width', '100%');
    fitWindow();
    layout();
    applyState();
    svg.setAttribute('data-ready', '1');
  }

  init();
})();
)JS";

}  // namespace gpuperf
