"""Checks gpuperf's in-process CPython frame walker against the interpreter's own view.

Usage: python3 check_frames.py DIR_OF_THE_PROBE_MODULE

Each case calls _gpuperf_pyframes_probe.walk() (which releases the GIL, walks this
thread's frames, interns their code objects and resolves lines from the copied line
tables) and compares the result, frame by frame, with sys._getframe() taken on the same
source line: qualified name (3.11+, co_name on 3.10), file name, line, and for the
callers the instruction offset (f_lasti). Prints one line per failure and a summary;
exits 0 only when everything matched.
"""
import os
import sys
import threading

sys.path.insert(0, sys.argv[1])
import _gpuperf_pyframes_probe as probe  # noqa: E402

HAS_QUALNAME = sys.version_info >= (3, 11)
results = {"passed": 0, "failed": 0}


def fail(label, message):
    results["failed"] += 1
    print(f"FAIL {label}: {message}")


def passed():
    results["passed"] += 1


def truth(frame):
    """(name, filename, line, f_lasti) per frame, innermost first."""
    out = []
    while frame is not None:
        code = frame.f_code
        name = code.co_qualname if HAS_QUALNAME else code.co_name
        out.append((name, code.co_filename, frame.f_lineno, frame.f_lasti))
        frame = frame.f_back
    return out


def check(got, label, limit=None):
    """Compares walk() output with the caller's frames (the call must be on one line)."""
    want = truth(sys._getframe(1))
    if limit is not None:
        want = want[:limit]
    if len(got) != len(want):
        fail(label, f"{len(got)} frames, want {len(want)}:\n  got  {got[:4]}\n  want {want[:4]}")
        return got
    for i, ((name, filename, line, _, offset), (w_name, w_file, w_line, w_lasti)) in enumerate(
            zip(got, want)):
        if (name, filename, line) != (w_name, w_file, w_line):
            fail(label, f"frame {i}: got {(name, filename, line)}, want {(w_name, w_file, w_line)}")
            return got
        # The innermost frame has moved on from walk() to check() since; its callers have not.
        if i > 0 and offset * 2 != w_lasti:
            fail(label, f"frame {i} ({name}): instruction {offset * 2}, f_lasti {w_lasti}")
            return got
    passed()
    return got


# --- cases: functions at known lines, each ending in check(probe.walk(), ...) on one line ---

def inner():
    return check(probe.walk(), "nested calls")


def middle():
    x = 1
    return inner() if x else None


def outer():
    return middle()


class Model:
    def forward(self, depth):
        return check(probe.walk(), "method")

    class Block:
        def forward(self):
            return check(probe.walk(), "nested class")


def recurse(n):
    if n == 0:
        return check(probe.walk(), "recursion of depth 60")
    return recurse(n - 1)


def deep(n):
    if n == 0:
        return check(probe.walk(), "recursion cut at 128 frames", limit=128)
    return deep(n - 1)


def generator():
    yield check(probe.walk(), "generator via next()")
    yield check(probe.walk(), "generator in a for loop")


class WithInit:
    def __init__(self):
        self.got = check(probe.walk(), "__init__ called by the class")


def fünf():
    return check(probe.walk(), "latin-1 name")


def 函数():
    return check(probe.walk(), "UCS-2 name")


def 𠀀():
    return check(probe.walk(), "UCS-4 name")


EMOJI_FILE = "/tmp/gpüperf_模型_😀.py"
EMOJI_SOURCE = "def far_away():\n    return check(probe.walk(), 'UCS-4 file name')\n"


def entry_inner():
    return probe.walk()


def entry_middle():
    return list(map(lambda _: entry_inner(), [0]))[0]


def check_entries():
    got = entry_middle()
    flags = [entry for _, _, _, entry, _ in got]
    names = [name.rsplit(".", 1)[-1] for name, _, _, _, _ in got]
    if sys.version_info < (3, 11):
        want = [True] * len(got)  # 3.10: one native eval call per frame
    else:
        # Called from C: the lambda (by map) and the module (by the interpreter's main).
        want = [name in ("<lambda>", "<module>") for name in names]
    if flags != want:
        fail("entry flags", f"{list(zip(names, flags))}, want {want}")
    else:
        passed()


REUSED_FILE = "<reused address>"


def check_reused_addresses():
    """Code objects freed and others made at their addresses (CPython's allocator hands the
    freed block straight back): each walk must name the new function, with its own line.
    Every other one keeps the name "made" (one interned str object) and the same file name
    object and first line, so only the line table (and on 3.12+ co_version) tells them
    apart."""
    namespace = {"probe": probe}
    reused = 0
    last_address = None
    for i in range(60):
        name = "made" if i % 2 == 0 else f"made_{i}"
        blank_lines = i % 3
        source = f"def {name}():\n" + "\n" * blank_lines + "    return probe.walk()\n"
        exec(compile(source, REUSED_FILE, "exec"), namespace)
        function = namespace.pop(name)
        address = id(function.__code__)
        reused += address == last_address
        last_address = address
        got = function()[0][:3]
        want = (name, REUSED_FILE, 2 + blank_lines)
        del function  # frees the code object: the next one may take its address
        if got != want:
            fail("reused code addresses", f"function {i}: got {got}, want {want}")
            return
    if reused < 10:
        fail("reused code addresses", f"only {reused} of 60 code objects reused an address")
        return
    print(f"reused code addresses: {reused} of 60 code objects took a freed one's address")
    passed()


def check_line_tables():
    """The offline resolver against code.co_lines() on every code object of a few modules."""
    import inspect
    import json.decoder
    codes = []

    def collect(code):
        codes.append(code)
        for const in code.co_consts:
            if hasattr(const, "co_lines"):
                collect(const)

    for module in (inspect, threading, json.decoder, sys.modules[__name__]):
        source = open(module.__file__, encoding="utf-8").read()
        collect(compile(source, module.__file__, "exec"))
    units = 0
    for code in codes:
        for start, end, line in code.co_lines():
            for unit in range(start // 2, end // 2):
                got = probe.resolve(code.co_linetable, code.co_firstlineno, sys.version_info[1],
                                    unit)
                units += 1
                if got != (line or 0):
                    fail("line tables", f"{code.co_name} unit {unit}: {got}, want {line}")
                    return
    print(f"line tables: {units} instructions of {len(codes)} code objects match co_lines()")
    passed()


def main():
    state, major, minor = probe.init()
    print(f"walker: {state} for CPython {major}.{minor} ({sys.version.split()[0]})")
    if state != "ready":
        fail("init", f"state {state}")
        return
    outer()
    Model().forward(1)
    Model.Block().forward()
    (lambda: check(probe.walk(), "lambda"))()
    recurse(60)
    truncated = probe.counters()["truncated"]
    deep(200)
    if probe.counters()["truncated"] != truncated + 1:
        fail("truncation counter", f"{probe.counters()}")
    gen = generator()
    next(gen)
    for _ in gen:
        pass
    for _ in range(20):  # 3.12+ specialize this call after a few rounds
        WithInit()
    fünf()
    函数()
    𠀀()
    namespace = {"check": check, "probe": probe}
    exec(compile(EMOJI_SOURCE, EMOJI_FILE, "exec"), namespace)
    namespace["far_away"]()
    worker = threading.Thread(target=outer)
    worker.start()
    worker.join()
    check_entries()
    no_tstate = probe.counters()["no_thread_state"]
    if probe.walk_from_native_thread() != 0 or probe.counters()["no_thread_state"] != no_tstate + 1:
        fail("thread without a thread state", f"{probe.counters()}")
    else:
        passed()
    check_reused_addresses()
    check_line_tables()
    counters = probe.counters()
    if counters["intern_failed"] or counters["unreadable_names"] or counters["broken"]:
        fail("counters", f"{counters}")


main()
print(f"{results['passed']} passed, {results['failed']} failed")
sys.exit(1 if results["failed"] else 0)
