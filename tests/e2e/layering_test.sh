#!/usr/bin/env bash
# The floors of docs/architecture.md. Every folder of src/ is built against an include view of
# its own (cmake/Floors.cmake): links to the folders it may include and nothing else, so a
# forbidden #include in a file the build compiles is a missing file and fails the build. This
# test adds what a build does not see, with no exception anywhere:
#  - every header of a floor resolves its includes in the floor's view, whether or not a
#    compiled file includes it;
#  - the views make no cycle: no two floors see each other;
#  - only src/inject/cupti/ sees CUPTI (besides the preload library, the fake libcupti and the
#    floor tracers), and in the injection library only injection.cc includes that layer;
#  - libgpuperf_inject.so has the trace writer and no reader, and the benchmark hook exactly
#    when GPUPERF_BENCH_HOOKS asks for it.
source "$(dirname "$0")/lib.sh"
cd "$SRC" || exit 1
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }

views=$GPUPERF_BINARY_DIR/views
[[ -d $views ]] || { fail "no include views in $views: the build does not hold the floors"; finish; }

# Each floor's headers, all at once, against its view (the CUDA headers for the two libraries
# that see CUPTI, the generated BPF skeleton for the CPU profiler).
cxx=${CXX:-c++}
command -v "$cxx" >/dev/null || cxx=g++
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
for owns in "$views"/*.owns; do
  target=$(basename "$owns" .owns)
  : > "$probe/$target.cc"
  while read -r folder; do
    [[ -n $folder ]] || continue
    find "src/$folder" -name '*.h' | sort | sed 's|^src/\(.*\)$|#include "\1"|' >> "$probe/$target.cc"
  done < "$owns"
  errors=$("$cxx" -std=gnu++20 -E -I "$views/$target" -I "${GPUPERF_CUDA_ROOT:-/usr/local/cuda}/include" \
           -I "$GPUPERF_BINARY_DIR/src/ebpf" "$probe/$target.cc" -o /dev/null 2>&1) ||
    fail "a header of $target includes what its view does not hold: $(grep -m3 -E 'error' <<<"$errors")"
done

# No two floors see each other. A view sees a folder when its path there leads to that folder
# (a view's own directories, made to hold deeper links, are not the folder).
sees() { [[ -e $views/$1/$2 && $(realpath "$views/$1/$2") == $(realpath "src/$2") ]]; }
for a in "$views"/*.owns; do
  for b in "$views"/*.owns; do
    [[ $a < $b ]] || continue
    ta=$(basename "$a" .owns) tb=$(basename "$b" .owns)
    while read -r fa; do
      while read -r fb; do
        [[ -n $fa && -n $fb ]] && sees "$ta" "$fb" && sees "$tb" "$fa" &&
          fail "$ta ($fa) and $tb ($fb) see each other"
      done < "$b"
    done < "$a"
  done
done

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

# Inside the library, only the wiring includes the CUPTI layer: injection.cc (a recording from
# cuInit on) and attach_window.cc (a window in a running process, docs/attach.md); cupti/
# depends on the rest, never the reverse (recorder.h says why).
hits=$(git ls-files -co --exclude-standard -- 'src/inject/*' | grep -v -E '^src/inject/cupti/' |
       grep -v -E '^src/inject/(injection|attach_window)\.cc$' | grep -E '\.(cc|h)$' |
       xargs grep -l '#include "inject/cupti/')
[[ -z $hits ]] || fail "files outside src/inject/cupti/ including it: $hits"

# The guest library writes traces and never reads one: no reader, no appender linked in.
lib=$GPUPERF_BINARY_DIR/src/inject/libgpuperf_inject.so
if [[ -f $lib ]]; then
  symbols=$(nm -C "$lib" | grep -E 'ReadTrace|AppendToTrace|ReadReport')
  [[ -z $symbols ]] || fail "libgpuperf_inject.so links the trace reader: $symbols"
  nm -C "$lib" | grep -q 'TraceWriter::Create' || fail "libgpuperf_inject.so lacks the writer"
  # The benchmark hook is in exactly when GPUPERF_BENCH_HOOKS asks for it.
  hooks=$(sed -n 's/^GPUPERF_BENCH_HOOKS:BOOL=//p' "$GPUPERF_BINARY_DIR/CMakeCache.txt")
  exported=no
  nm -D --defined-only "$lib" | grep -q ' gpuperf_bench_toggle$' && exported=yes
  [[ ($hooks == OFF && $exported == no) || ($hooks != OFF && $exported == yes) ]] ||
    fail "GPUPERF_BENCH_HOOKS=${hooks:-unset} but gpuperf_bench_toggle exported: $exported"
else
  echo "no $lib (built without CUPTI headers): symbol check skipped"
fi

finish
