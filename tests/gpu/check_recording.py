#!/usr/bin/env python3
"""Checks a recording against what the recorded example says it did.

Usage: check_recording.py GPUPERF TRACE_DIR EXAMPLE_STDOUT [--expect-function NAME]...

The example prints one line `gpuperf-example: name=.. kernels=N memcpy_bytes=B ...`
(-1 = unknown). We compare with `gpuperf dump`: kernel count, copy and set bytes, NVTX
ranges, graph kernels attributed to their graph launch, sane timestamps, every GPU
activity joined to a launch stack, and (with symbols) the example's own functions in
those stacks. Prints one line per check and exits 1 if any failed.
"""
import re
import subprocess
import sys

FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def parse_dump(text):
    records = {}
    for line in text.splitlines():
        if not line or line.startswith('#'):
            continue
        kind, _, rest = line.partition(' ')
        fields = {k: (v[1:-1] if v.startswith('"') else v) for k, v in FIELD.findall(rest)}
        fields['_line'] = rest
        records.setdefault(kind, []).append(fields)
    return records


def main():
    args = sys.argv[1:]
    expected_functions = []
    while '--expect-function' in args:
        i = args.index('--expect-function')
        expected_functions.append(args[i + 1])
        del args[i:i + 2]
    gpuperf, trace_dir, stdout_path = args
    summary = {}
    for line in open(stdout_path, errors='replace'):
        if line.startswith('gpuperf-example:'):
            summary = dict(kv.split('=', 1) for kv in line.split()[1:] if '=' in kv)
    dump = subprocess.run([gpuperf, 'dump', trace_dir], capture_output=True, text=True)
    if dump.returncode != 0:
        print(f'FAIL dump: {dump.stderr.strip()}')
        return 1
    r = parse_dump(dump.stdout)
    kernels = r.get('kernel', [])
    failures = 0

    def check(ok, what):
        nonlocal failures
        print(('ok   ' if ok else 'FAIL ') + what)
        failures += 0 if ok else 1

    name = summary.get('name', '?')
    want = int(summary.get('kernels', -1))
    if want >= 0:
        check(len(kernels) == want, f'{name}: kernel records {len(kernels)} == launches {want}')
    else:
        check(len(kernels) > 0, f'{name}: kernel records {len(kernels)} > 0')
    procs = {p['pid']: p for p in r.get('process', [])}
    bad_time = 0
    for k in kernels:
        s, e = int(k['start_ns']), int(k['end_ns'])
        p = procs.get(k['pid'])
        if s > e or (p and (s < int(p['start_ns']) or (int(p['end_ns']) and e > int(p['end_ns'])))):
            bad_time += 1
    check(bad_time == 0, f'{name}: kernel timestamps sane (start<=end, inside the process): {bad_time} bad')
    for field, kind in (('memcpy_bytes', 'memcpy'), ('memset_bytes', 'memset')):
        want_bytes = int(summary.get(field, -1))
        got = sum(int(x['bytes']) for x in r.get(kind, []))
        if want_bytes >= 0:
            check(got == want_bytes, f'{name}: {kind} bytes {got} == {want_bytes}')
    want_nvtx = int(summary.get('nvtx_ranges', -1))
    ranges = [n for n in r.get('nvtx', []) if n['kind'] == 'range']
    if want_nvtx > 0:
        check(len(ranges) == want_nvtx, f'{name}: NVTX ranges {len(ranges)} == {want_nvtx}')
    links = {}
    for link in r.get('launch_link', []):
        links[(link['pid'], link['correlation_id'])] = link
    activities = kernels + r.get('memcpy', []) + r.get('memset', [])
    joined = [a for a in activities if (a['pid'], a['correlation_id']) in links
              or (a['pid'], a.get('runtime_correlation_id')) in links]
    with_stack = [a for a in joined
                  if links.get((a['pid'], a['correlation_id']),
                               links.get((a['pid'], a.get('runtime_correlation_id')), {})).get('stack_id', '0') != '0']
    if activities and r.get('launch_link'):
        check(len(with_stack) == len(activities),
              f'{name}: GPU activities joined to a launch stack {len(with_stack)}/{len(activities)}')
    want_graph = int(summary.get('graph_kernels', 0))
    if want_graph > 0:
        graph_kernels = [k for k in kernels if k['graph_id'] != '0']
        from_graph_launch = [k for k in graph_kernels
                             if 'GraphLaunch' in links.get((k['pid'], k['correlation_id']), {}).get('api_name', '')]
        check(len(graph_kernels) == want_graph, f'{name}: graph kernels {len(graph_kernels)} == {want_graph}')
        check(len(from_graph_launch) == len(graph_kernels),
              f'{name}: graph kernels attributed to their graph launch {len(from_graph_launch)}/{len(graph_kernels)}')
    lost = [s for s in r.get('stat', []) if s.get('stat') in ('1', '2', '4', '5', '6', '7', '8')
            and s['value'] != '0']
    print(f'info {name}: data-loss stats: {[(s["stat"], s["value"]) for s in lost] or "none"}')
    if expected_functions:
        # Functions on the stacks that launched kernels, through the stored symbols.
        symbols = {}
        for sym in r.get('symbol', []):
            names = re.findall(r'frame="((?:[^"\\]|\\.)*)"', sym.get('_line', ''))
            symbols[(sym['pid'], sym['pc'])] = names
        stacks = {(s['pid'], s['id']): s['pcs'].split(',') for s in r.get('stack', [])}
        on_stacks = set()
        for k in kernels:
            link = links.get((k['pid'], k['correlation_id']))
            if not link:
                continue
            for pc in stacks.get((k['pid'], link['stack_id']), []):
                on_stacks.update(symbols.get((k['pid'], pc), []))
        for fn in expected_functions:
            check(any(fn in f for f in on_stacks), f'{name}: kernel launch stacks contain {fn}()')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
