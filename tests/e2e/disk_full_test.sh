#!/usr/bin/env bash
# A full disk or the file size limit (`ulimit -f`) loses only what it must (issue 29): the
# program lives and exits with its own status, the trace reads without a damaged chunk, its
# end (the final counters and process record) is there, and record's summary and report count
# exactly the kernels left out (the fake app knows what it launched). A live page that does not
# fit under the limit is skipped in one line. docs/recording.md "A full disk".
source "$(dirname "$0")/lib.sh"
use_fake_app
export GPUPERF_LIVE_DIR=$dir/live  # this test's own pages

mounts=()
cleanup() {
  for m in "${mounts[@]}"; do umount "$m" 2>/dev/null; done
  rm -rf "$dir"
}
trap cleanup EXIT

# rec NAME OUT_DIR [LIMIT_KIB] -- ARGS...: records `fake_cuda_app ARGS` through sh, which exits
# 3 after the app exited 0 (so record's 3 says the program lived and ended normally), under a
# file size limit of LIMIT_KIB (none: "-"). Output in $dir/NAME.log.
rec() {
  local name=$1 out=$2 limit=$3
  shift 4
  # The log is written by cat, outside the limit.
  (
    [[ $limit == - ]] || ulimit -f "$limit"
    exec "$GPUPERF" record -o "$out" --force --inject-lib "$lib" -- \
      sh -c '"$0" "$@" && exit 3' "$app" "$@"
  ) 2>&1 | cat > "$dir/$name.log"
  local rc=${PIPESTATUS[0]}
  [[ $rc -eq 3 ]] || fail "$name: record exited $rc, want 3 (the program's own): $(grep -v '^fake' "$dir/$name.log" | tail -4)"
}

# not_written FILE KIND: the count of KIND_not_written in record's summary or report's text.
not_written() {
  grep "\[${2}_not_written\]" "$1" | sed 's/^ *\(LOST *\)\?\(pid [0-9]*: \)\?//' |
    grep -o '^[0-9][0-9,]*' | tr -d , | head -1
}

# exact NAME OUT_DIR: every kernel, API call and launch stack the app made is either in the
# trace or counted as not written, in record's summary and in report alike; the trace has no
# damaged chunk and has its end. Sets `missing` to the records not written of those kinds.
exact() {
  local name=$1 out=$2 log=$dir/$1.log
  "$GPUPERF" report -s loss "$out" > "$dir/$name.report" 2>&1 || fail "$name: report failed"
  local kernels api recorded_kernels recorded_api recorded_links kind made recorded summary report
  kernels=$(sed -n 's/^fake-app: .* kernels=\([0-9]*\).*/\1/p' "$log")
  api=$(sed -n 's/^fake-app: .* api=\([0-9]*\).*/\1/p' "$log")
  recorded_kernels=$(sed -n 's/^  kernels *\([0-9,]*\).*/\1/p' "$log" | tr -d ,)
  recorded_api=$(sed -n 's/^  API calls \([0-9,]*\),.*/\1/p' "$log" | tr -d ,)
  recorded_links=$(sed -n 's/^  API calls .*launch stacks [0-9,]* of \([0-9,]*\).*/\1/p' "$log" | tr -d ,)
  missing=0
  for kind in kernels:$kernels:$recorded_kernels apis:$api:$recorded_api launch_links:$api:$recorded_links; do
    IFS=: read -r kind made recorded <<< "$kind"
    [[ -n $made && -n $recorded ]] || { fail "$name: no $kind counts in $(grep -v '^fake-cupti' "$log")"; continue; }
    summary=$(not_written "$log" "$kind") report=$(not_written "$dir/$name.report" "$kind")
    [[ $((recorded + ${summary:-0})) -eq $made ]] ||
      fail "$name: $recorded $kind recorded + ${summary:-0} not written != $made made"
    [[ ${report:-0} -eq ${summary:-0} ]] ||
      fail "$name: report counts ${report:-0} $kind not written, the summary ${summary:-0}"
    missing=$((missing + ${summary:-0}))
  done
  grep -E 'chunks_corrupt|bytes_truncated|process_incomplete|files_without_chunks' "$dir/$name.report" &&
    fail "$name: the trace is damaged or has no end"
  grep -q 'up to one flush period' "$log" && fail "$name: summary guesses instead of counting"
  check_loss_agrees "$out"
}

# --- file size limit: no root needed ----------------------------------------------------------
# The live page (81.x KiB) does not fit under 16 or 64 KiB: skipped with one line; the
# program lives (before: SIGXFSZ ended it, and record said it "never initialized CUDA").
# LIMIT_KIB:LAUNCHES, each clearly over or under (a full trace takes about 190 KiB per 100,000).
for run in 16:100000 64:100000 82:100000 200:400000 4096:100000; do
  IFS=: read -r limit launches <<< "$run"
  rec "limit$limit" "$dir/limit$limit" "$limit" -- many "$launches"
  exact "limit$limit" "$dir/limit$limit"
  pages=$(grep -c 'no live page' "$dir/limit$limit.log")
  if [[ $limit -lt 82 ]]; then
    [[ $pages -eq 1 ]] || fail "limit$limit: want one line about the live page, got $pages"
    grep -q "no live page.*file size limit (ulimit -f) of $limit KiB" "$dir/limit$limit.log" ||
      fail "limit$limit: the live page line does not name the limit: $(grep 'live page' "$dir/limit$limit.log")"
  else
    [[ $pages -eq 0 ]] || fail "limit$limit: live page skipped under a limit it fits"
  fi
  if [[ $limit -le 200 ]]; then
    [[ $missing -gt 0 ]] || fail "limit$limit: nothing left out under a $limit KiB limit"
    grep -q "cannot write the trace: the file size limit (ulimit -f) of $limit KiB is reached" \
      "$dir/limit$limit.log" || fail "limit$limit: no line saying why records were left out"
    size=$(stat -c %s "$dir/limit$limit"/*.gpt | sort -n | tail -1)
    [[ $size -le $((limit * 1024)) ]] || fail "limit$limit: trace of $size bytes past the limit"
  else
    [[ $missing -eq 0 ]] || fail "limit$limit: $missing records left out with room for all"
    grep -q "lost      nothing" "$dir/limit$limit.log" || fail "limit$limit: a loss without cause"
  fi
done
# No room even for the file's header: said as such, not "never initialized CUDA".
rec limit0 "$dir/limit0" 0 -- many 1000
grep -q "gpuperf: the trace could not be written: the file size limit (ulimit -f) is 0 B" \
  "$dir/limit0.log" || fail "limit0: $(grep -v '^fake' "$dir/limit0.log")"
grep -q "never initialized CUDA" "$dir/limit0.log" && fail "limit0: blames the program"

# --- a full file system: root mounts one ------------------------------------------------------
if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP (the rest): mounting a small file system needs root"
  finish
fi
# small NAME SIZE: a tmpfs of SIZE at $dir/NAME (it preallocates: the reserve is held).
small() {
  mkdir -p "$dir/$1"
  mount -t tmpfs -o "size=$2" tmpfs "$dir/$1" || { fail "cannot mount a tmpfs"; return 1; }
  mounts+=("$dir/$1")
}
# 2 MiB holds about two thirds of 1,500,000 launches, 64 KiB almost none of 100,000 (before:
# most or all lost, and reported as "up to one flush period").
small tmpfs2m 2m && rec tmpfs2m "$dir/tmpfs2m/rec" - -- many 1500000
exact tmpfs2m "$dir/tmpfs2m/rec"
[[ $missing -gt 0 && $missing -lt $((3 * 1500001)) ]] || fail "tmpfs2m: $missing records left out"
small tmpfs64k 64k && rec tmpfs64k "$dir/tmpfs64k/rec" - -- many 100000
exact tmpfs64k "$dir/tmpfs64k/rec"
[[ $missing -gt 0 ]] || fail "tmpfs64k: nothing left out"
grep -q "cannot write the trace: No space left on device" "$dir/tmpfs64k.log" ||
  fail "tmpfs64k: no line saying why: $(grep gpuperf "$dir/tmpfs64k.log")"

# No inode left for the trace file (the mount's root and record's directory take both).
small noinode 1m,nr_inodes=2 && rec noinode "$dir/noinode/rec" - -- many 1000
grep -q "gpuperf: no trace in $dir/noinode/rec: .* or its trace could not be created: the file system of $dir/noinode/rec has no free inodes" \
  "$dir/noinode.log" || fail "noinode: $(grep -v '^fake' "$dir/noinode.log")"

# ext2 cannot preallocate: a write that fails halfway is cut off, so the next chunks land after
# whole ones (before: a torn chunk in the middle of the file). Its end has no reserve there.
if command -v mkfs.ext2 >/dev/null && truncate -s 2M "$dir/ext2.img" &&
   mkfs.ext2 -q -F "$dir/ext2.img" && mkdir -p "$dir/ext2" &&
   mount -o loop "$dir/ext2.img" "$dir/ext2" 2>/dev/null; then
  mounts+=("$dir/ext2")
  rec ext2 "$dir/ext2/rec" - -- many 1500000
  "$GPUPERF" report -s loss "$dir/ext2/rec" > "$dir/ext2.report" 2>&1 || fail "ext2: report failed"
  grep -E 'chunks_corrupt|bytes_truncated' "$dir/ext2.report" && fail "ext2: a torn chunk is left"
  # Without a reserve the end may not fit: then the summary says the process has none.
  grep -qE '\[([a-z_]+_not_written|process_incomplete)\]' "$dir/ext2.log" ||
    fail "ext2: the loss is not said: $(grep -A3 -i lost "$dir/ext2.log")"
  check_loss_agrees "$dir/ext2/rec"
else
  echo "SKIP (ext2): no loop device or mkfs.ext2 here"
fi

finish
