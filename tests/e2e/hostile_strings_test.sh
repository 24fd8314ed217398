#!/usr/bin/env bash
# Names a recorded program controls are bytes, any bytes (docs/report.md, "Names from the
# recorded program"). Bytes that are not UTF-8 (Latin-1, overlong, a surrogate), terminal
# escape sequences (a title, a screen clear), C0 controls, DEL, C1 (raw and as UTF-8) and a
# newline, in every name, go through every output: each exits 0, parses with a strict parser,
# shows the bytes as \xNN and puts no control character on a terminal; no temporary file is
# left. Two traces: the test builder's (support/hostile_trace.h: command line, host, device,
# thread, kernel, function, file, module, Python and NVTX names), and a real recording of the
# fake CUDA app run as a program whose file name, arguments, thread, kernel and NVTX range
# carry the bytes, whose live page top and serve show while it runs.
source "$(dirname "$0")/lib.sh"
use_fake_app
hostile=$bin/tests/gpuperf_hostile_trace
[[ -x $hostile ]] || { echo "skip: no gpuperf_hostile_trace in this build"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
export GPUPERF_LIVE_DIR=$dir/live
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$dir"' EXIT

# No spaces: reports shorten names with spaces to their last word, as C++ signatures.
name=$'caf\xe9_\xc0\xaf_\xed\xa0\x80_\x1b]0;pwned\x07_\x1b[2J_\x01\x7f_\x9b_\xc2\x9b_nl\nX'
program=$'app\x1b[2J\xe9'  # the fake app's file name: the trace's and the module's name

# check.py KIND FILE NEEDLE...: FILE is valid UTF-8, holds no control character but newline
# (JSON's are escaped), parses as KIND with a strict parser and holds each NEEDLE (in JSON:
# in a decoded string).
cat > "$dir/check.py" <<'EOF'
import csv, io, json, sys, xml.etree.ElementTree as ET
kind, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
text = data.decode("utf-8")  # strict: bytes that are not UTF-8 fail here
bad = sorted({hex(ord(c)) for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f})
if bad: sys.exit("control characters %s in %s" % (bad, path))
if kind == "json":
    doc = json.loads(text)  # raw control characters in strings are refused
    strings = []
    def walk(v):
        if isinstance(v, dict):
            for k, x in v.items(): strings.append(k); walk(x)
        elif isinstance(v, list):
            for x in v: walk(x)
        elif isinstance(v, str):
            strings.append(v)
    walk(doc)
    text = "\n".join(strings)  # the escaped forms are looked for in the values
elif kind == "csv":
    rows = list(csv.reader(io.StringIO(text)))
    widths = {len(r) for r in rows if r and not r[0].startswith("#")}
    if len(widths) > 1: sys.exit("csv rows of different widths %s" % sorted(widths))
elif kind == "xml":
    ET.fromstring(data)
elif kind == "folded":
    for line in text.splitlines():
        stack, _, weight = line.rpartition(" ")
        if not stack or not weight.isdigit(): sys.exit("not a folded line: %r" % line)
for needle in sys.argv[3:]:
    if needle not in text: sys.exit("%s lacks %r" % (path, needle))
EOF
# expect_clean KIND FILE NEEDLE...: check.py passes.
expect_clean() {
  local why
  why=$(python3 "$dir/check.py" "$@" 2>&1) || fail "$2: $why"
}
# run_ok OUT CMD...: CMD exits 0 with stdout in OUT and stderr in OUT.err.
run_ok() {
  local out=$1; shift
  "$@" > "$out" 2> "$out.err" || fail "exit $?: $* ($(head -c 300 "$out.err"))"
  expect_clean text "$out.err"
}
no_temporaries() {
  local left; left=$(find "$dir" -name '*.gpuperf-*')
  [[ -z $left ]] || fail "temporary files left behind: $left"
}

# The escaped forms (base/text_escape.h) of parts of $name, for a terminal and for UTF-8.
shown=('caf\xe9' '\xc0\xaf' '\xed\xa0\x80' '\x1b]0' 'pwned\x07' '\x1b[2J' '\x01\x7f' '\x9b' '\xc2\x9b' 'nl\x0aX')
utf8=('caf\xe9' '\xc0\xaf' '\xed\xa0\x80' $'\x1b]0;pwned\x07' $'\x1b[2J' $'\xc2\x9b' $'nl\nX')

# every_output TRACE TAG: every offline output of TRACE, under $dir/out/TAG.
every_output() {
  local trace=$1 tag=$2
  local out=$dir/out/$tag
  mkdir -p "$out"
  run_ok "$out/report.txt" "$GPUPERF" report "$trace"
  expect_clean text "$out/report.txt" "${shown[@]}"
  run_ok "$out/report.json" "$GPUPERF" report "$trace" --format json -o "$out/r.json"
  expect_clean json "$out/r.json" "${utf8[@]}"
  run_ok "$out/report.csv" "$GPUPERF" report "$trace" --format csv --sections kernels
  expect_clean csv "$out/report.csv" "${shown[@]}"
  run_ok "$out/diff.txt" "$GPUPERF" diff "$trace" "$trace"
  expect_clean text "$out/diff.txt" 'caf\xe9' '\x1b[2J'
  # A JSON baseline holds names as UTF-8; the trace, as bytes: both are the same kernels.
  run_ok "$out/diff-json.txt" "$GPUPERF" diff "$out/r.json" "$trace"
  expect_clean text "$out/diff-json.txt" 'caf\xe9'
  if grep -qE '\((new|gone)\)' "$out/diff-json.txt"; then
    fail "$tag: diff of its JSON report and itself sees new or gone names: $(grep -E '\((new|gone)\)' "$out/diff-json.txt")"
  fi
  run_ok "$out/flame.txt" "$GPUPERF" flamegraph "$trace" -o "$out/flame.svg"
  expect_clean xml "$out/flame.svg" "${shown[@]}"
  run_ok "$out/folded.txt" "$GPUPERF" flamegraph "$trace" --folded -o "$out/flame.folded"
  expect_clean folded "$out/flame.folded" 'caf\xe9' '\x1b[2J' '\x1b]0:pwned\x07' 'nl\x0aX'
  run_ok "$out/chrome.txt" "$GPUPERF" export "$trace" -o "$out/trace.json"
  expect_clean json "$out/trace.json" "${utf8[@]}"
  run_ok "$out/perfetto.txt" "$GPUPERF" export "$trace" -o "$out/trace.perfetto-trace"
  run_ok "$out/pprof.txt" "$GPUPERF" export "$trace" -o "$out/profile.pb.gz"
  if command -v protoc >/dev/null; then
    # Perfetto's schema is proto2: protoc decodes a string that is not UTF-8 but says so.
    # The packets are in zstd bundles: opened first, as trace processor does.
    python3 "$SRC/tests/tools/perfetto_unpack.py" "$out/trace.perfetto-trace" "$out/trace.pb" ||
      fail "$tag: cannot open the Perfetto trace's bundles"
    protoc --decode=perfetto.protos.Trace -I "$SRC/tests/proto" "$SRC/tests/proto/perfetto_min.proto" \
      < "$out/trace.pb" > "$out/perfetto.decoded" 2> "$out/perfetto.protoc" ||
      fail "$tag: protoc cannot decode the Perfetto trace"
    [[ ! -s $out/perfetto.protoc ]] || fail "$tag: protoc on the Perfetto trace: $(head -2 "$out/perfetto.protoc")"
    grep -qF 'caf\\xe9' "$out/perfetto.decoded" || fail "$tag: the Perfetto trace lacks caf\\xe9"
    gzip -dc "$out/profile.pb.gz" |
      protoc --decode=perftools.profiles.Profile -I "$SRC/tests/proto" "$SRC/tests/proto/profile.proto" \
        > "$out/pprof.decoded" 2> "$out/pprof.protoc" ||
      fail "$tag: protoc cannot decode the pprof profile: $(head -2 "$out/pprof.protoc")"
    grep -qF 'caf\\xe9' "$out/pprof.decoded" || fail "$tag: the pprof string table lacks caf\\xe9"
  fi
  run_ok "$out/dump.txt" "$GPUPERF" dump "$trace"
  expect_clean text "$out/dump.txt" 'caf\xe9' '\x1b]0;pwned\x07' '\x1b[2J' '\xc2\x9b' 'nl\nX'
  no_temporaries
}

# --- the builder's trace: every string field ---
"$hostile" "$dir/hostile.gpt" "$name" || fail "gpuperf_hostile_trace failed"
every_output "$dir/hostile.gpt" builder
run_ok "$dir/insights.txt" "$GPUPERF" report "$dir/hostile.gpt" --insights --sections insights
expect_clean text "$dir/insights.txt" "launch_bound" 'launch_caf\xe9' '(caf\xe9'
for needle in 'node-caf\xe9' 'GPU caf\xe9' 'step_caf\xe9' 'domain caf\xe9'; do
  grep -rqF "$needle" "$dir/out/builder/report.txt" "$dir/out/builder/flame.svg" ||
    fail "no output of the builder's trace shows $needle"
done

# --- a real recording: the program's file name, arguments, thread, kernel and NVTX range ---
cp "$app" "$dir/$program"
"$GPUPERF" record -o "$dir/rec" --inject-lib "$lib" -- env FAKE_APP_RELEASE="$dir/release" \
  "$dir/$program" names "$name" 600000 > "$dir/app.out" 2> "$dir/record.err" &
record_pid=$!
pids+=("$record_pid")
# waits up to 60 s for CONDITION (a command) to succeed
wait_for() { for _ in $(seq 600); do "$@" && return 0; sleep 0.1; done; return 1; }
wait_for grep -qs '^fake-app: pid=' "$dir/app.out" || fail "the app never ran: $(cat "$dir/record.err")"
app_pid=$(sed -n 's/^fake-app: pid=\([0-9]*\).*/\1/p' "$dir/app.out")
page_has_kernels() {
  "$GPUPERF" top --once --format json --pid "$app_pid" > "$dir/top.json" 2> "$dir/top.err" &&
    python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["processes"][0]
sys.exit(0 if sum(k["count"] for k in p.get("kernels", [])) == 3 else 1)' "$dir/top.json" 2>/dev/null
}
wait_for page_has_kernels || fail "top never showed the app's 3 kernels: $(head -c 400 "$dir/top.json")"
expect_clean json "$dir/top.json" 'caf\xe9' $'\x1b[2J' $'nl\nX'
run_ok "$dir/top.txt" "$GPUPERF" top --once --pid "$app_pid"
expect_clean text "$dir/top.txt" 'caf\xe9' '\x1b[2J'
"$GPUPERF" serve --listen 127.0.0.1:0 2> "$dir/serve.err" &
pids+=("$!")
wait_for grep -qs "metrics at" "$dir/serve.err" || fail "serve did not start: $(cat "$dir/serve.err")"
port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$dir/serve.err")
# scrape [ACCEPT]: the metrics page.
scrape() {
  python3 -c 'import sys, urllib.request as u
r = u.Request(sys.argv[1], headers={"Accept": sys.argv[2]} if sys.argv[2] else {})
sys.stdout.buffer.write(u.urlopen(r, timeout=30).read())' "http://127.0.0.1:$port/metrics" "${1:-}"
}
scrape > "$dir/metrics.txt" || fail "scrape failed"
expect_clean text "$dir/metrics.txt" 'caf\\xe9' '\\x1b[2J'
grep -q '^gpuperf_kernel_launches_total{.*kernel="caf\\\\xe9_.*"} 3$' "$dir/metrics.txt" ||
  fail "the scrape does not count the kernel's 3 launches: $(grep kernel_launches "$dir/metrics.txt")"
if command -v promtool >/dev/null; then
  promtool check metrics < "$dir/metrics.txt" > "$dir/promtool.txt" 2>&1 ||
    fail "promtool check metrics: $(head -5 "$dir/promtool.txt")"
fi
scrape 'application/openmetrics-text;version=1.0.0' > "$dir/metrics.om" || fail "OpenMetrics scrape failed"
expect_clean text "$dir/metrics.om" 'caf\\xe9'
touch "$dir/release"
wait "$record_pid" || fail "record exited $?: $(cat "$dir/record.err")"
expect_clean text "$dir/record.err"
every_output "$dir/rec" recording
# The command line, the program's file and module path, and the thread name (15 bytes).
grep -qF "$dir/"'app\x1b[2J\xe9 names caf\xe9' "$dir/out/recording/report.txt" ||
  fail "the report does not show the command line escaped: $(grep -F pid "$dir/out/recording/report.txt" | head -3)"
grep -qF 'app\x1b[2J\xe9"' "$dir/out/recording/dump.txt" || fail "the dump does not show the module path escaped"
grep -qF 'name="caf\xe9_\xc0\xaf_\xed\xa0\x80_\x1b]0"' "$dir/out/recording/dump.txt" ||
  fail "the dump lacks the thread name (its first 15 bytes)"

# --- messages that quote a path a program chose: error and warning lines ---
bad=$dir/$'bad\x1b]0;pwned\x07\xe9.gpt'
echo "not a trace" > "$bad"
"$GPUPERF" report "$bad" > /dev/null 2> "$dir/error.txt"
[[ $? -eq 3 ]] || fail "report on a file that is not a trace: exit $?, want 3"
expect_clean text "$dir/error.txt" 'gpuperf: error: ' 'bad\x1b]0;pwned\x07\xe9.gpt'
mkdir "$dir/damaged"
size=$(stat -c %s "$dir/hostile.gpt")
head -c $((size - 7)) "$dir/hostile.gpt" > "$dir/damaged/$program-cut.gpt"
run_ok "$dir/damaged.txt" "$GPUPERF" report "$dir/damaged"
expect_clean text "$dir/damaged.txt.err" 'gpuperf: warning: ' 'app\x1b[2J\xe9-cut.gpt'

finish
