#!/usr/bin/env bash
# Host waits (stream and device synchronizations) become sync records from gpuperf's own API
# callbacks, not CUPTI's SYNCHRONIZATION kind, which stays off (src/inject/cupti/host_waits.h
# says why). Against the kind (GPUPERF_API_SOURCE=cupti) on the fake CUDA app's syncs scenario:
# the same waits of the same kinds on the same streams; ours also carry their thread and the
# call's own times, and the report names the line that waited.
source "$(dirname "$0")/lib.sh"
use_fake_app

for way in callbacks cupti; do
  GPUPERF_API_SOURCE=$way "$GPUPERF" record -o "$dir/$way" --force --inject-lib "$lib" -- \
    "$app" syncs 20 > "$dir/$way.log" 2>&1 || fail "$way: record exited $? ($(tail -3 "$dir/$way.log"))"
  "$GPUPERF" dump "$dir/$way" > "$dir/$way.dump" 2>&1 || fail "$way: dump failed"
done
pid=$(sed -n 's/^fake-app: pid=\([0-9]*\) .*syncs=\([0-9]*\).*/\1/p' "$dir/callbacks.log")
[[ $(sed -n 's/^fake-app: .* syncs=\([0-9]*\) .*/\1/p' "$dir/callbacks.log") -eq 40 ]] ||
  fail "the app did not make its 40 waits: $(grep '^fake-app' "$dir/callbacks.log")"

# CUPTI's SYNCHRONIZATION kind (38) is on only when API records come from CUPTI.
kind_on() {
  local mask; mask=$(sed -n 's/.* kinds_mask=\(0x[0-9a-f]*\).*/\1/p' "$dir/$1.log")
  (( (mask >> 38) & 1 ))
}
kind_on callbacks && fail "the SYNCHRONIZATION kind was enabled by default"
kind_on cupti || fail "GPUPERF_API_SOURCE=cupti did not enable the SYNCHRONIZATION kind"

# The same waits: kind, and the stream of each stream wait.
keys() {
  sed -n 's/^sync .* kind=\([a-z_]*\) .* stream_id=\([0-9]*\) .*/\1 \2/p' "$dir/$1.dump" |
    awk '{print ($1 == "stream_synchronize" || $1 == "stream_wait_event") ? $1 " " $2 : $1}' |
    sort | uniq -c | awk '{$1 = $1; print}' |
    paste -sd ';'
}
[[ $(keys callbacks) == "$(keys cupti)" ]] ||
  fail "the waits differ: callbacks [$(keys callbacks)] CUPTI [$(keys cupti)]"
[[ $(keys callbacks) == "20 context_synchronize;20 stream_synchronize 13;20 stream_wait_event 13" ]] ||
  fail "want 20 device waits, 20 stream waits and 20 waits of stream 13: $(keys callbacks)"

# Ours: the thread that waited, and the times of its API record; a stream's wait on an event
# (no CPU wait) has no stack, the CPU's waits have theirs.
python3 - "$dir/callbacks.dump" "$pid" <<'PY' || fail "sync records do not match their API calls"
import re, sys
fields = lambda line: dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))
syncs, apis = [], {}
for line in open(sys.argv[1]):
    if line.startswith("sync "):
        syncs.append(fields(line))
    elif line.startswith("api "):
        f = fields(line)
        apis[f["correlation_id"]] = f
bad = [s for s in syncs if s["tid"] != sys.argv[2] or s["correlation_id"] not in apis
       or (s["start_ns"], s["end_ns"]) != (apis[s["correlation_id"]]["start_ns"],
                                          apis[s["correlation_id"]]["end_ns"])]
for s in bad[:3]:
    print("  ", s, apis.get(s["correlation_id"]), file=sys.stderr)
sys.exit(1 if bad or len(syncs) != 60 else 0)
PY

unlinked=$(python3 - "$dir/callbacks.dump" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
linked = {m.group(1) for line in lines if line.startswith("launch_link ")
          for m in [re.search(r" correlation_id=(\d+) stack_id=(\d+)", line)] if m and m.group(2) != "0"}
kinds = {}
for line in lines:
    if line.startswith("sync "):
        kind = re.search(r" kind=(\w+)", line).group(1)
        has = re.search(r" correlation_id=(\d+)", line).group(1) in linked
        kinds.setdefault(kind, set()).add(has)
print(" ".join(f"{k}={sorted(v)}" for k, v in sorted(kinds.items())))
PY
)
[[ $unlinked == "context_synchronize=[True] stream_synchronize=[True] stream_wait_event=[False]" ]] ||
  fail "stacks of the waits (kind=[has a stack]): $unlinked"

# The report's sync rows name the line that waited.
"$GPUPERF" report "$dir/callbacks" --sections sync > "$dir/sync.txt" 2>&1 || fail "report failed"
grep -qE 'stream_synchronize  *13 .*StreamSynchronize(\(\))? \(fake_app.cc:[0-9]*\)' "$dir/sync.txt" ||
  fail "no stream wait row with its stack: $(cat "$dir/sync.txt")"
grep -q 'context_synchronize .*DeviceSynchronize() (fake_app.cc:[0-9]*)' "$dir/sync.txt" ||
  fail "no device wait row with its stack: $(cat "$dir/sync.txt")"
finish
