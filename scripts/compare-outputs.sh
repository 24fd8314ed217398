#!/usr/bin/env bash
# Runs every offline output of the CLI over every recorded fixture, so that a change meant to
# keep behaviour (moving code, splitting libraries) can be shown to change no output byte.
#
#   scripts/compare-outputs.sh record GPUPERF_BIN OUT_DIR [TRACE_DIR ...]
#       every fixture under tests/data (each folder holding .gpt files is one input), plus the
#       TRACE_DIRs given: report (text, JSON, CSV, --insights, --split-by rank), flamegraph
#       (SVG, folded, every weight, split and mode), export (Perfetto, Chrome JSON, .json.gz,
#       pprof), dump, source, and diff (each fixture against itself, its report JSON, and the
#       same program recorded on the other GPU). Each command's stdout, stderr and exit status
#       are kept too, so an error that changes shows as well.
#   scripts/compare-outputs.sh compare DIR_A DIR_B
#       byte-compares two such directories; prints the counts, lists every difference, exits 1
#       if there is one.
#
# Commands run in one fixed scratch folder with relative output names, so that two runs
# (two builds) write the same bytes wherever their OUT_DIRs are.
set -u -o pipefail

src_dir=$(cd "$(dirname "$0")/.." && pwd)

usage() {
  sed -n '4,13p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

compare() {
  local a=$1 b=$2
  [[ -d $a && -d $b ]] || { echo "compare-outputs: $a or $b is not a directory" >&2; exit 2; }
  local same=0 differ=0 only=0 path
  local list
  list=$( (cd "$a" && find . -type f; cd "$b" && find . -type f) | sort -u)
  while IFS= read -r path; do
    if [[ ! -f $a/$path ]]; then
      echo "only in $b: $path"; only=$((only + 1))
    elif [[ ! -f $b/$path ]]; then
      echo "only in $a: $path"; only=$((only + 1))
    elif cmp -s "$a/$path" "$b/$path"; then
      same=$((same + 1))
    else
      echo "differs: $path"; differ=$((differ + 1))
    fi
  done <<<"$list"
  echo "compare-outputs: $same identical, $differ differ, $only in one directory only"
  [[ $differ -eq 0 && $only -eq 0 ]]
}

# run NAME COMMAND...: runs one command in the scratch folder; keeps its stdout, stderr and
# exit status, and moves every file it wrote into OUT_DIR/NAME.*
run() {
  local name=$1
  shift
  rm -rf "$work" && mkdir -p "$work"
  (cd "$work" && "$@" >"$out/$name.stdout" 2>"$out/$name.stderr")
  echo $? >"$out/$name.rc"
  local file
  for file in "$work"/*; do
    [[ -e $file ]] || continue
    mv "$file" "$out/$name.$(basename "$file")"
  done
  # An empty stdout or stderr says nothing: drop it so that the listing stays readable.
  [[ -s $out/$name.stdout ]] || rm -f "$out/$name.stdout"
  [[ -s $out/$name.stderr ]] || rm -f "$out/$name.stderr"
}

record_one() {
  local trace=$1 name=$2
  local bin=$gpuperf
  run "$name.report" "$bin" report "$trace"
  run "$name.report_json" "$bin" report "$trace" --json -o report.json
  run "$name.report_csv" "$bin" report "$trace" --format csv
  run "$name.report_top5_name" "$bin" report "$trace" --top 5 --sort name --full-names
  run "$name.report_insights" "$bin" report "$trace" --insights
  run "$name.report_insights_json" "$bin" report "$trace" --insights --json
  run "$name.report_split_rank" "$bin" report "$trace" --split-by rank
  run "$name.report_split_rank_json" "$bin" report "$trace" --split-by rank --json
  run "$name.flamegraph" "$bin" flamegraph "$trace" -o flame.svg
  run "$name.flamegraph_folded" "$bin" flamegraph "$trace" --folded
  local weight split
  for weight in count cpu offcpu all energy; do
    run "$name.flamegraph_$weight" "$bin" flamegraph "$trace" --folded --weight "$weight"
  done
  for split in device stream thread rank; do
    run "$name.flamegraph_split_$split" "$bin" flamegraph "$trace" --folded --split-by "$split"
  done
  run "$name.flamegraph_inverted" "$bin" flamegraph "$trace" --inverted -o inverted.svg
  run "$name.flamegraph_inverted_folded" "$bin" flamegraph "$trace" --inverted --folded
  run "$name.flamegraph_mangled" "$bin" flamegraph "$trace" --folded --no-demangle --full-names \
    --python-internals
  run "$name.flamegraph_pc_frames" "$bin" flamegraph "$trace" --folded --pc-frames
  run "$name.export_perfetto" "$bin" export "$trace" -o timeline.perfetto-trace
  run "$name.export_chrome" "$bin" export "$trace" -o timeline.json
  run "$name.export_chrome_gz" "$bin" export "$trace" -o timeline.json.gz
  run "$name.export_pprof" "$bin" export "$trace" -o profile.pb.gz
  run "$name.export_perfetto_window" "$bin" export "$trace" -o window.perfetto-trace \
    --from 1ms --max-kernels 20
  run "$name.dump" "$bin" dump "$trace"
  run "$name.source" "$bin" source "$trace" --source-dir "$src_dir/tests/data/metrics"
  run "$name.diff_self" "$bin" diff "$trace" "$trace"
  # The baseline JSON is read from one fixed path too: diff may name it.
  cp "$out/$name.report_json.report.json" "$work.base.json" 2>/dev/null
  run "$name.diff_json" "$bin" diff "$work.base.json" "$trace" --top 0 \
    --fail-if 'total_gpu_time>+10%' --fail-if 'api_failures>0'
}

record() {
  local bin=$1
  out=$2
  shift 2
  [[ -x $bin ]] || { echo "compare-outputs: $bin is not an executable" >&2; exit 2; }
  gpuperf=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
  mkdir -p "$out" || exit 2
  out=$(cd "$out" && pwd)
  work=${TMPDIR:-/tmp}/gpuperf-compare-outputs-work
  export LC_ALL=C TZ=UTC
  unset COLUMNS GPUPERF_LIB_DIR
  local inputs=() dir
  while IFS= read -r dir; do
    inputs+=("$dir")
  done < <(find "$src_dir/tests/data" -name '*.gpt' -printf '%h\n' | sort -u)
  inputs+=("$@")
  local count=0 name
  for dir in "${inputs[@]}"; do
    dir=$(cd "$dir" && pwd) || exit 2
    name=${dir#"$src_dir"/tests/data/}
    name=${name//\//_}
    record_one "$dir" "$name"
    count=$((count + 1))
  done
  # The same programs recorded on an H100 and an H200: a diff with real changes.
  local h100 h200
  for h100 in "$src_dir"/tests/data/h100/*/; do
    h200=$src_dir/tests/data/h200/$(basename "$h100")
    [[ -d $h200 ]] || continue
    run "diff_h100_h200_$(basename "$h100")" "$gpuperf" diff "$h100" "$h200" --top 0
  done
  rm -rf "$work" "$work.base.json"
  echo "compare-outputs: $count inputs, $(find "$out" -type f | wc -l) files in $out"
}

case ${1:-} in
  record) [[ $# -ge 3 ]] || usage; shift; record "$@" ;;
  compare) [[ $# -eq 3 ]] || usage; compare "$2" "$3" ;;
  *) usage ;;
esac
