"""Whether a timeline (gpuperf export) holds a cudaLaunchKernel slice whose stack has a frame
containing INNER inside (before, innermost first) a frame containing OUTER. Prints the first
such slice's stack; exits 1 when there is none.

Usage: python3 timeline_order.py TIMELINE.json INNER OUTER
"""
import json
import sys


def launch_stacks(path):
    trace = json.load(open(path))
    frames = trace["stackFrames"]

    def chain(node):
        names = []
        while node:
            names.append(frames[node]["name"])
            node = frames[node].get("parent")
        return names

    return [chain(str(e["sf"])) for e in trace["traceEvents"]
            if e.get("name") == "cudaLaunchKernel" and "sf" in e]


def first_index(stack, text):
    return next((i for i, frame in enumerate(stack) if text in frame), None)


def main():
    path, inner, outer = sys.argv[1:4]
    for stack in launch_stacks(path):
        i, o = first_index(stack, inner), first_index(stack, outer)
        if i is not None and o is not None and i < o:
            print("timeline stack:", stack)
            return 0
    return 1


sys.exit(main())
