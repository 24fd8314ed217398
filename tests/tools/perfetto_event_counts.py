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
import codecs
import collections
import hashlib
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
            if value.startswith('"'):  # protoc escapes strings as C does
                value = codecs.escape_decode(value[1:-1].encode("latin-1"))[0].decode(
                    "utf-8", "replace")
            stack[-1][name].append(value)
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


def dim3(message):
    return "[%s, %s, %s]" % (first(message, "x"), first(message, "y"), first(message, "z"))


def count(packets):
    """Counts of events, and digests of their content: every slice with its track, times,
    name and arguments, every arrow by its two ends, every counter value and instant."""
    counts = collections.Counter()
    content = collections.defaultdict(list)  # kind -> one line per event
    interned = collections.defaultdict(dict)  # (sequence, kind) -> iid -> entry
    clock = {}  # sequence -> (incremental clock value or None, defaults)
    tracks = {}  # uuid -> name
    parents = {}  # uuid -> parent uuid
    open_slices = collections.defaultdict(list)  # track -> begun slices
    arrow_starts, arrow_ends = {}, collections.defaultdict(list)
    submitted = []  # (event id, launch call)
    gpu_by_event = collections.defaultdict(list)
    track_event_slices = []
    for p in packets:
        seq = first(p, "trusted_packet_sequence_id", "0")
        if first(p, "sequence_flags") == "1":
            for key in [k for k in interned if k[0] == seq]:
                del interned[key]
        for defaults in p.get("trace_packet_defaults", []):
            clock[seq] = (clock.get(seq, (None, None))[0], defaults)
        for snapshot in p.get("clock_snapshot", []):
            for c in snapshot.get("clocks", []):
                if first(c, "is_incremental") == "true":
                    clock[seq] = (int(first(c, "timestamp")), clock.get(seq, (None, None))[1])
        for data in p.get("interned_data", []):
            for kind, entries in data.items():
                for entry in entries:
                    interned[(seq, kind)][first(entry, "iid")] = entry

        def lookup(kind, iid):
            return interned[(seq, kind)].get(iid, {})

        def text(kind, iid):
            entry = lookup(kind, iid)
            return first(entry, "name", first(entry, "str"))

        # The packet's time, on its sequence's incremental clock where it has one.
        ts = None
        if "timestamp" in p:
            ts = int(first(p, "timestamp"))
            value, defaults = clock.get(seq, (None, None))
            on_clock = first(p, "timestamp_clock_id") or (
                defaults and first(defaults[0] if isinstance(defaults, list) else defaults,
                                   "timestamp_clock_id"))
            if value is not None and on_clock == "64":
                ts = value + ts
                clock[seq] = (ts, defaults)
        for t in p.get("track_descriptor", []):
            name = first(t, "name")
            for thread in t.get("thread", []):
                name = first(thread, "thread_name")
            for process in t.get("process", []):
                name = first(process, "process_name")
            tracks[first(t, "uuid")] = name
            parents[first(t, "uuid")] = first(t, "parent_uuid")
            name_of_track[first(t, "uuid")] = first(t, "name")

        def args_of(e):
            args = {}
            for a in e.get("debug_annotations", []):
                key = text("debug_annotation_names", first(a, "name_iid"))
                args[key] = (text("debug_annotation_string_values", first(a, "string_value_iid"))
                             if "string_value_iid" in a else
                             first(a, "uint_value", first(a, "double_value",
                                                          first(a, "string_value"))))
            return args

        def stack_of(e, args):
            if "launch_stack" in args:
                return args.pop("launch_stack")
            stack = lookup("callstacks", first(e, "callstack_iid"))
            frames = []
            for frame_id in stack.get("frame_ids", []):
                frame = lookup("frames", frame_id)
                shown = text("function_names", first(frame, "function_name_id"))
                if "source_path_iid" in frame:
                    shown += " (" + text("source_paths", first(frame, "source_path_iid"))
                    if "line_number" in frame:
                        shown += ":" + first(frame, "line_number")
                    shown += ")"
                frames.insert(0, shown)
            return "\n".join(frames)

        for e in p.get("track_event", []):
            kind = first(e, "type")
            defaults = clock.get(seq, (None, None))[1]
            track = first(e, "track_uuid")
            if track is None and defaults:
                for d in defaults.get("track_event_defaults", []):
                    track = first(d, "track_uuid")
            category = text("event_categories", first(e, "category_iids"))
            if kind == "TYPE_SLICE_BEGIN":
                if category in API_CATEGORIES:
                    counts["slices: CUDA API calls"] += 1
                elif category == "nvtx":
                    counts["slices: NVTX ranges"] += 1
                elif category in GPU_CATEGORIES:
                    counts["slices: GPU " + GPU_CATEGORIES[category]] += 1
                else:
                    counts[f"slices: {category}"] += 1
                args = args_of(e)
                stack = stack_of(e, args)
                counts["stacks on API calls"] += bool(stack)
                name = text("event_names", first(e, "name_iid"))
                where = tracks.get(track)
                if category in GPU_CATEGORIES:  # "GPU 0 (...) rank 1 / stream 7"
                    where = f"{tracks.get(parents.get(track))} / {where}"
                slice_ = [category, where, name, ts, args, stack]
                open_slices[track].append(slice_)
                track_event_slices.append(slice_)
                for flow in e.get("flow_ids", []):
                    arrow_starts[flow] = slice_
                for flow in e.get("terminating_flow_ids", []):
                    arrow_ends[flow].append(slice_)
                for correlation in e.get("[perfetto.protos.GpuTrackEvent.gpu_correlation]", []):
                    for event_id in correlation.get("render_stage_submission_event_ids", []):
                        submitted.append((event_id, slice_))
            elif kind == "TYPE_SLICE_END" and open_slices[track]:
                slice_ = open_slices[track].pop()
                slice_.append(ts)
            elif kind == "TYPE_INSTANT":
                counts[f"instants: {category}"] += 1
                content["instants"].append(repr((text("event_names", first(e, "name_iid")), ts)))
            elif kind == "TYPE_COUNTER":
                name = counter_name(name_of_track.get(track))
                counts[f"counter values: {name}"] += 1
                value = first(e, "counter_value", first(e, "double_counter_value"))
                content["counter values"].append(repr((name, ts, float(value))))
        for g in p.get("gpu_render_stage_event", []):
            stage = text("gpu_specifications", first(g, "stage_iid"))
            counts["slices: GPU " + STAGES.get(stage, str(stage))] += 1
            args = {}
            for launch in g.get("launch", []):
                for grid in launch.get("grid_size", []):
                    args["grid"] = dim3(grid)
                for block in launch.get("workgroup_size", []):
                    args["block"] = dim3(block)
            kernel = lookup("[perfetto.protos.GpuInternedData.compute_kernels]",
                            first(g, "kernel_iid"))
            extra = kernel.get("args", []) + [a for launch in g.get("launch", [])
                                              for a in launch.get("args", [])]
            for a in extra:
                key = text("[perfetto.protos.GpuInternedData.compute_arg_names]",
                           first(a, "name_iid"))
                args[key] = (text("debug_annotation_string_values", first(a, "string_value_iid"))
                             if "string_value_iid" in a else
                             first(a, "uint_value", first(a, "double_value",
                                                          first(a, "string_value"))))
            category = {"Kernel": "kernel", "Memcpy": "memcpy", "Memset": "memset"}.get(stage)
            spec = lookup("gpu_specifications", first(g, "hw_queue_iid"))
            # The stream's name without the process it names ("stream 7 (rank 1)"); its
            # GPU's name, as the older encoding's parent track had it.
            queue = f"{first(spec, 'description')} / {counter_name(first(spec, 'name'))}"
            slice_ = [category, queue, text("event_names", first(g, "name_iid")), ts, args, "",
                      ts + int(first(g, "duration", "0"))]
            content["slices"].append(slice_)
            gpu_by_event[first(g, "event_id")].append(slice_)
        for c in p.get("gpu_counter_event", []):
            descriptor = lookup("gpu_counter_descriptors", first(c, "counter_descriptor_iid"))
            spec = first(first(descriptor, "counter_descriptor", {}), "specs", {})
            name = counter_name(first(spec, "name"))
            counts[f"counter values: {name}"] += len(c.get("counters", []))
            for counter in c.get("counters", []):
                value = first(counter, "int_value", first(counter, "double_value"))
                content["counter values"].append(repr((name, ts, float(value))))
    # An arrow is drawn where both ends exist: a flow id on both sides, or a submitted
    # event id that GPU work carries.
    arrows = [(start, end) for flow, start in arrow_starts.items()
              for end in arrow_ends.get(flow, [])]
    arrows += [(start, end) for event_id, start in submitted for end in gpu_by_event[event_id]]
    counts["flow arrows"] = len(arrows)
    content["arrows"] = [repr((a[2], a[3], b[2], b[3])) for a, b in arrows]
    content["slices"] += track_event_slices
    return counts, content


name_of_track = {}


def digest(lines):
    return hashlib.sha1("\n".join(sorted(lines)).encode()).hexdigest()[:16]


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
        counts, content = count(decode(trace, args.proto_path, protos))
        column = {key: str(value) for key, value in counts.items() if value}
        for kind, lines in content.items():
            column[f"content digest: {kind}"] = digest(repr(line) for line in lines)
        columns.append(column)
    keys = sorted(set().union(*columns))
    width = max(len(k) for k in keys)
    print(" " * width + "".join(f" {os.path.basename(t)[-24:]:>24}" for t in args.traces))
    for key in keys:
        print(f"{key:<{width}}" + "".join(f" {c.get(key, '0'):>24}" for c in columns))
    if any(c != columns[0] for c in columns[1:]):
        print("the traces differ")
        sys.exit(1)


if __name__ == "__main__":
    main()
