#!/usr/bin/env bash
# Checks the Perfetto encoding against Perfetto's own schema and against an older gpuperf:
# every trace is exported by both binaries, the new file is decoded with protoc against
# Perfetto's official protos (a checkout of google/perfetto; not kept in this repository)
# with no field left unknown, and both files' events are counted and must be equal
# (tests/tools/perfetto_event_counts.py: slices per kind, instants, arrows, counter
# values, launch stacks) and digested (every slice's track, times, name, arguments and
# stack; every arrow by its ends; every counter value and instant).
#
#   bench/perfetto_verify.sh OLD_GPUPERF NEW_GPUPERF PERFETTO_CHECKOUT TRACE...
#
# PERFETTO_CHECKOUT holds protos/perfetto/trace/perfetto_trace.proto (the merged schema)
# and the split protos it is made from; the GPU extensions gpuperf writes
# (GpuTrackEvent.gpu_correlation, GpuInternedData.compute_kernels/compute_arg_names)
# are in the split protos only, so the decode uses trace.proto with them. The merged
# schema alone is tried too: it must know every field except those extensions.
set -uo pipefail
old=${1:?OLD_GPUPERF}
new=${2:?NEW_GPUPERF}
protos=$(cd "${3:?PERFETTO_CHECKOUT}" && pwd)
shift 3
tools=$(cd "$(dirname "$0")/../tests/tools" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuperf-perfetto-verify.XXXXXX")
trap 'rm -rf "$work"' EXIT
official=(--proto-path "$protos" --proto "$protos/protos/perfetto/trace/trace.proto"
  --proto "$protos/protos/perfetto/trace/gpu/gpu_track_event.proto"
  --proto "$protos/protos/perfetto/trace/gpu/gpu_interned_data.proto")
failed=0
for trace in "$@"; do
  name=$(basename "${trace%/}")
  "$old" export "$trace" -o "$work/old.perfetto-trace" >/dev/null 2>&1 || { echo "$name: old export failed"; failed=1; continue; }
  "$new" export "$trace" -o "$work/new.perfetto-trace" >/dev/null 2>&1 || { echo "$name: new export failed"; failed=1; continue; }
  # The merged schema: unknown fields are only the GPU extensions (1000, 1001, 3000).
  python3 "$tools/perfetto_unpack.py" "$work/new.perfetto-trace" "$work/new.pb"
  protoc --decode=perfetto.protos.Trace -I "$protos" "$protos/protos/perfetto/trace/perfetto_trace.proto" \
    < "$work/new.pb" > "$work/merged.txt" || { echo "$name: the merged schema cannot decode it"; failed=1; }
  # Fields protoc could not name, outside those it could not name either.
  others=$(python3 - "$work/merged.txt" <<'PY'
import re, sys
stack, unknown = [], set()
for line in open(sys.argv[1]):
    line = line.strip()
    if line == "}":
        stack.pop()
        continue
    name = re.match(r"[^:{ ]+", line).group(0)
    if name.isdigit() and not any(n.isdigit() for n in stack):
        unknown.add(name)
    if line.endswith("{"):
        stack.append(name)
print(" ".join(sorted(unknown - {"1000", "1001", "3000"})))
PY
)
  [[ -z $others ]] || { echo "$name: unknown to the merged schema: $others"; failed=1; }
  echo "== $name: $(stat -c %s "$work/old.perfetto-trace") -> $(stat -c %s "$work/new.perfetto-trace") bytes"
  # Both files against Perfetto's split protos with the GPU extensions (a superset of
  # what the old files use): counts and content digests side by side; the script fails
  # on any unknown field and on any difference.
  python3 "$tools/perfetto_event_counts.py" "${official[@]}" "$work/old.perfetto-trace" \
    "$work/new.perfetto-trace" || { echo "  $name: the files differ"; failed=1; }
done
exit $failed
