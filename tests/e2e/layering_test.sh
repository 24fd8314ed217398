#!/usr/bin/env bash
# The edges docs/architecture.md promises: only src/inject/cupti/ sees CUPTI, the rest of the
# injection library reaches it through injection.cc alone, offline code never includes the
# injection library, and libgpuperf_inject.so carries no trace reader.
source "$(dirname "$0")/lib.sh"
cd "$SRC" || exit 1
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }

# Where CUPTI may appear: its wrapper, the preload library in front of cuptiSubscribe, the fake
# libcupti, and the CUPTI floor tracers.
allowed='^(src/inject/cupti/|src/preload/|tests/fakes/|bench/cupti_floor/|tests/e2e/cupti_floor/)'
sources=$(git ls-files -co --exclude-standard -- '*.cc' '*.h' '*.cu' | grep -v -E "$allowed")

# A CUPTI header (cupti*.h, or generated_* NVTX/CUDA tables that come with it).
hits=$(grep -n -E '^\s*#\s*include\s*[<"](cupti[a-z_]*|generated_[a-z_]*)\.h[>"]' $sources)
[[ -z $hits ]] || fail "CUPTI headers included outside src/inject/cupti/: $hits"
# A CUPTI call; comments (// ...) are stripped first, they may name functions.
hits=$(for f in $sources; do
  sed 's|//.*||' "$f" | grep -n -E '\bcupti[A-Z][A-Za-z0-9_]*\s*\(' | sed "s|^|$f:|"
done)
[[ -z $hits ]] || fail "CUPTI calls outside src/inject/cupti/: $hits"
# Nor through the back door: the headers of cupti/ that others include are CUPTI-free.
for header in $(grep -h -o '"inject/cupti/[a-z_]*\.h"' $sources | tr -d '"' | sort -u); do
  grep -q -E '#\s*include\s*[<"](cupti|inject/cupti/cupti_call)' "src/$header" &&
    fail "src/$header, included outside src/inject/cupti/, pulls in CUPTI"
done

# Inside the library, only the wiring (injection.cc) includes the CUPTI layer; cupti/ depends
# on the rest, never the reverse (recorder.h says why).
hits=$(git ls-files -co --exclude-standard -- 'src/inject/*' | grep -v -E '^src/inject/cupti/' |
       grep -v '^src/inject/injection\.cc$' | grep -E '\.(cc|h)$' |
       xargs grep -l '#include "inject/cupti/')
[[ -z $hits ]] || fail "files outside src/inject/cupti/ including it: $hits"

# Offline code never includes the injection library (tests may, to record themselves). What
# the CPU profiler's recorder shares with it (the unwinding engine, CPython's layouts and
# readers) lives in floors of its own below both, src/unwind/ and src/cpython/.
hits=$(git ls-files -co --exclude-standard -- 'src/*.cc' 'src/*.h' include |
       grep -v -E '^src/inject/|_test\.cc$' | xargs grep -H '#include "inject/')
[[ -z $hits ]] || fail "offline code including src/inject/: $hits"
# Those shared floors are state-free code below everything that uses them: they include
# nothing but themselves, base/ and the public headers.
for floor in unwind cpython; do
  hits=$(git ls-files -co --exclude-standard -- "src/$floor/*" | grep -E '\.(cc|h)$' |
         grep -v '_test\.cc$' | xargs grep -H '#include "' |
         grep -v -E "#include \"($floor|base|gpuperf)/")
  [[ -z $hits ]] || fail "src/$floor/, shared by the guest library and the CPU profiler, includes more: $hits"
done
# The guest library reaches nothing above the floors it is built on (no analysis, export,
# live reader or CLI code).
hits=$(git ls-files -co --exclude-standard -- 'src/inject/*' | grep -E '\.(cc|h)$' |
       grep -v '_test\.cc$' | xargs grep -H '#include "' |
       grep -v -E '#include "(inject|format|unwind|cpython|base|preload|gpuperf)/')
[[ -z $hits ]] || fail "the injection library includes code above its floors: $hits"

# Analyses turn records into models and events; exporters only serialize them, so nothing
# below src/export/ (analysis, format, base, symbolization) includes it.
hits=$(git ls-files -co --exclude-standard -- 'src/analyze/*' 'src/format/*' 'src/base/*' \
         'src/symbolize/*' | grep -E '\.(cc|h)$' | grep -v '_test\.cc$' |
       xargs grep -l '#include "export/')
[[ -z $hits ]] || fail "analysis or lower layers including src/export/: $hits"

# The guest library writes traces and never reads one: no reader, no appender linked in.
lib=$GPUPERF_BINARY_DIR/src/inject/libgpuperf_inject.so
if [[ -f $lib ]]; then
  symbols=$(nm -C "$lib" | grep -E 'ReadTrace|AppendToTrace|ReadReport')
  [[ -z $symbols ]] || fail "libgpuperf_inject.so links the trace reader: $symbols"
  nm -C "$lib" | grep -q 'TraceWriter::Create' || fail "libgpuperf_inject.so lacks the writer"
else
  echo "no $lib (built without CUPTI headers): symbol check skipped"
fi

finish
