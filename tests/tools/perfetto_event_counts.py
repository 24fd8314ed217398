#!/usr/bin/env python3
"""Counts the events of gpuperf Perfetto timelines from protoc's text output: slices per
kind (CUDA API calls, NVTX ranges, kernels, copies, sets), instants, flow arrows and
counter values per counter. Reads both encodings gpuperf has written: TrackEvents on one
sequence (before the compact encoding) and the compact one (per-track sequences, GPU
work as GpuRenderStageEvents, arrows through gpu_correlation, GpuCounterEvents).

    perfetto_event_counts.py [--proto-path DIR --proto FILE ...] TRACE [TRACE ...]

Each TRACE is unpacked (tests/tools/perfetto_unpack.py), decoded with
`protoc --decode=perfetto.protos.Trace` against the given schema (default: the test
schema, tests/proto/perfetto_min.proto) and counted. With several traces it prints one
column each and exits 1 unless all columns are equal. Fails on any field the schema
does not know (protoc prints those as bare numbers)."""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfetto_unpack  # noqa: E402

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
API_CATEGORIES = {"cuda_runtime", "cuda_driver", "cuda_api"}
GPU_CATEGORIES = {"kernel": "kernels", "memcpy": "copies", "memset": "sets"}
STAGES = {"Kernel": "kernels", "Memcpy": "copies", "Memset": "sets"}
UNKNOWN_FIELD = re.compile(r"^\s*\d+(: | \{)")


def parse_text(lines):
    """protoc text format -> nested dicts of lists (one dict per message)."""
    root = collections.defaultdict(list)
    stack = [root]
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if UNKNOWN_FIELD.match(line):
            raise SystemExit(f"unknown field in the decoded trace: {line}")
        if line == "}":
            stack.pop()
        elif line.endswith("{"):
            child = collections.defaultdict(list)
            stack[-1][line[:-1].strip()].append(child)
            stack.append(child)
        else:
            name, value = line.split(": ", 1)
            stack[-1][name].append(value.strip('"'))
    return root


def first(message, name, default=None):
    values = message.get(name)
    return values[0] if values else default


def decode(path, proto_path, protos):
    with open(path, "rb") as f:
        data = perfetto_unpack.unpack(f.read())
    with tempfile.TemporaryFile() as raw:
        raw.write(data)
        raw.seek(0)
        args = ["protoc", "--decode=perfetto.protos.Trace", "-I", proto_path] + protos
        text = subprocess.run(args, stdin=raw, stdout=subprocess.PIPE, check=True,
                              universal_newlines=True).stdout
    return parse_text(text.splitlines())["packet"]


def counter_name(name):
    """'GPU 0 busy %', also for 'GPU 0 busy % (rank 1)': the compact encoding names the
    process in the counter's name, the first one in its parent track's."""
    return re.sub(r" \([^()]*\)$", "", name or "")


def count(packets):
    counts = collections.Counter()
    interned = collections.defaultdict(dict)  # (sequence, kind) -> iid -> text
    flows_out, flows_in = collections.Counter(), collections.Counter()
    submissions, gpu_event_ids = [], collections.Counter()
    for p in packets:
        seq = first(p, "trusted_packet_sequence_id", "0")
        if first(p, "sequence_flags") == "1":
            for key in [k for k in interned if k[0] == seq]:
                del interned[key]
        for data in p.get("interned_data", []):
            for kind, entries in data.items():
                for entry in entries:
                    text = first(entry, "name", first(entry, "str"))
                    for descriptor in entry.get("counter_descriptor", []):
                        text = first(first(descriptor, "specs"), "name")
                    interned[(seq, kind)][first(entry, "iid")] = text

        def lookup(kind, iid):
            return interned[(seq, kind)].get(iid)

        for e in p.get("track_event", []):
            kind = first(e, "type")
            category = lookup("event_categories", first(e, "category_iids"))
            if kind == "TYPE_SLICE_BEGIN":
                if category in API_CATEGORIES:
                    counts["slices: CUDA API calls"] += 1
                elif category == "nvtx":
                    counts["slices: NVTX ranges"] += 1
                elif category in GPU_CATEGORIES:
                    counts["slices: GPU " + GPU_CATEGORIES[category]] += 1
                else:
                    counts[f"slices: {category}"] += 1
                counts["stacks on API calls"] += "callstack_iid" in e or any(
                    lookup("debug_annotation_names", first(a, "name_iid")) == "launch_stack"
                    for a in e.get("debug_annotations", []))
            elif kind == "TYPE_INSTANT":
                counts[f"instants: {category}"] += 1
            elif kind == "TYPE_COUNTER":
                name = counter_name(name_of_track.get(first(e, "track_uuid")))
                counts[f"counter values: {name}"] += 1
            for flow in e.get("flow_ids", []):
                flows_out[flow] += 1
            for flow in e.get("terminating_flow_ids", []):
                flows_in[flow] += 1
            for correlation in e.get("[perfetto.protos.GpuTrackEvent.gpu_correlation]", []):
                submissions.extend(correlation.get("render_stage_submission_event_ids", []))
        for g in p.get("gpu_render_stage_event", []):
            stage = lookup("gpu_specifications", first(g, "stage_iid"))
            counts["slices: GPU " + STAGES.get(stage, str(stage))] += 1
            gpu_event_ids[first(g, "event_id")] += 1
        for c in p.get("gpu_counter_event", []):
            name = counter_name(
                lookup("gpu_counter_descriptors", first(c, "counter_descriptor_iid")))
            counts[f"counter values: {name}"] += len(c.get("counters", []))
        for t in p.get("track_descriptor", []):
            name_of_track[first(t, "uuid")] = first(t, "name")
    # An arrow is drawn where both ends exist: a flow id on both sides, or a submitted
    # event id that GPU work carries.
    counts["flow arrows"] = sum(min(n, flows_in[f]) for f, n in flows_out.items())
    counts["flow arrows"] += sum(gpu_event_ids[s] for s in submissions)
    return counts


name_of_track = {}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--proto-path", default=os.path.join(SOURCE, "tests/proto"))
    parser.add_argument("--proto", action="append")
    parser.add_argument("traces", nargs="+")
    args = parser.parse_args()
    protos = args.proto or [os.path.join(args.proto_path, "perfetto_min.proto")]
    columns = []
    for trace in args.traces:
        name_of_track.clear()
        columns.append(count(decode(trace, args.proto_path, protos)))
    keys = sorted(set().union(*columns))
    width = max(len(k) for k in keys)
    print(" " * width + "".join(f" {os.path.basename(t)[-24:]:>24}" for t in args.traces))
    for key in keys:
        print(f"{key:<{width}}" + "".join(f" {c[key]:>24}" for c in columns))
    if any(c != columns[0] for c in columns[1:]):
        print("the traces differ")
        sys.exit(1)


if __name__ == "__main__":
    main()
