#!/usr/bin/env bash
# Builds the trace-reader fuzz target with clang's libFuzzer (+ASan/UBSan) and runs it
# for a bounded time on a seed corpus of real small traces.
# Usage: scripts/fuzz.sh [SECONDS=30] [BUILD_DIR=build]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
build=${2:-build}
out=$build/fuzz
mkdir -p "$out/corpus"
CXX=${FUZZ_CXX:-$(command -v clang++ || command -v clang++-14)}
# Every file of the floors the reader lives on (format/, base/) goes into an archive, and the
# linker takes what the reader needs: a hand list of sources broke the CI twice when the
# reader came to need a new file.
flags=(-std=c++20 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
       -Iinclude -Isrc)
rm -rf "$out/objects"; mkdir -p "$out/objects"
ls src/format/*.cc src/base/*.cc | grep -v '_test\.cc$' |
  xargs -P "$(nproc)" -I{} sh -c 'dir=$1; shift; "$0" "$@" -c {} -o "$dir/$(echo {} | tr / _).o"' \
    "$CXX" "$out/objects" "${flags[@]}" 2> "$out/objects.log" ||
  { cat "$out/objects.log"; exit 1; }
rm -f "$out/reader.a"; ar rcs "$out/reader.a" "$out"/objects/*.o
"$CXX" "${flags[@]/fuzzer-no-link/fuzzer}" tests/fuzz/trace_reader_fuzzer.cc "$out/reader.a" \
  -lzstd -o "$out/trace_reader_fuzzer"
# Seeds: small valid traces (the fuzzer mutates them into damaged ones).
if [[ -x $build/bench/gpuperf_synth ]]; then
  "$build/bench/gpuperf_synth" -o "$out/corpus/seed1.gpt" --kernels 30 --threads 2 >/dev/null
  "$build/bench/gpuperf_synth" -o "$out/corpus/seed2.gpt" --kernels 5 --no-api >/dev/null
fi
find tests/data -name '*.gpt' -size -64k -exec cp {} "$out/corpus/" \; 2>/dev/null || true
echo "fuzz: running the trace reader fuzzer for ${seconds}s"
"$out/trace_reader_fuzzer" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
  -print_final_stats=1 "$out/corpus" 2>"$out/fuzz.log" || { tail -40 "$out/fuzz.log"; exit 1; }
grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out/fuzz.log" | sed 's/^/fuzz: /'
