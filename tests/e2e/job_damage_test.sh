#!/usr/bin/env bash
# A job's directory with one rank's trace cut short, one rank missing and one rank id claimed
# by a process of another run: every command that reads a job (report, --split-by rank, the
# Parquet export) says each problem in one line and reports the rest.
source "$(dirname "$0")/lib.sh"
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$SYNTH" --job "$dir/job" --ranks 8 --hosts 2 --kernels-per-rank 2000 --collectives-per-rank 40 \
  --slow-rank 6 || fail "synth failed"
"$SYNTH" --job "$dir/other" --ranks 8 --hosts 2 --kernels-per-rank 2000 --collectives-per-rank 40 \
  --first-pid 200000 || fail "synth (another run) failed"
bad=$dir/bad
mkdir -p "$bad"
cp "$dir"/job/*.gpt "$bad/"
size=$(stat -c %s "$bad/rank0005.gpt")
truncate -s $((size * 2 / 3)) "$bad/rank0005.gpt"  # rank 5: cut short
rm "$bad/rank0003.gpt"                              # rank 3: missing
cp "$dir/other/rank0002.gpt" "$bad/another0002.gpt" # rank 2: claimed twice

"$GPUPERF" report "$bad" --sections ranks > "$dir/report.txt" 2> "$dir/report.err" ||
  fail "report failed: $(cat "$dir/report.err")"
# One line each: the cut file (on stderr, as for any damaged trace), the missing ranks, the
# rank claimed twice.
[[ $(grep -c "rank0005.gpt ends inside a chunk" "$dir/report.err") -eq 1 ]] ||
  fail "the cut trace is not one warning: $(cat "$dir/report.err")"
[[ $(grep -c "have no trace here" "$dir/report.txt") -eq 1 ]] &&
  grep -q "ranks 3, 5 of the job's 8 have no trace here" "$dir/report.txt" ||
  fail "the missing ranks are not one line: $(grep '!' "$dir/report.txt")"
[[ $(grep -c "is claimed by" "$dir/report.txt") -eq 1 ]] &&
  grep -q "rank 2 is claimed by 2 processes (pid 100002 on node0, pid 200002 on node0)" "$dir/report.txt" ||
  fail "the rank claimed twice is not one line: $(grep '!' "$dir/report.txt")"
# The rest is reported: the other ranks, both claimants of rank 2 told apart, the straggler.
for r in 0 1 4 6 7; do
  grep -Eq "^  $r +node" "$dir/report.txt" || fail "rank $r missing from the ranks table"
done
grep -Eq '^  2 \(pid 100002\) ' "$dir/report.txt" && grep -Eq '^  2 \(pid 200002\) ' "$dir/report.txt" ||
  fail "the two claimants of rank 2 are not told apart: $(grep -E '^  2' "$dir/report.txt")"
grep -q "straggler: rank 6" "$dir/report.txt" || fail "no straggler: $(grep straggler "$dir/report.txt")"
grep -q "cannot be aligned" "$dir/report.txt" && fail "the cut trace's process left unaligned"

"$GPUPERF" report "$bad" --split-by rank > "$dir/split.txt" 2> "$dir/split.err" ||
  fail "--split-by rank failed: $(cat "$dir/split.err")"
[[ $(grep -c "rank0005.gpt ends inside a chunk" "$dir/split.err") -eq 1 ]] ||
  fail "--split-by rank: the cut trace is not one warning: $(cat "$dir/split.err")"
[[ $(grep -c "^==== rank" "$dir/split.txt") -eq 7 ]] ||
  fail "--split-by rank: not 7 rank reports: $(grep '^====' "$dir/split.txt")"
grep -q "ranks 3, 5 of the job's 8 have no trace here" "$dir/split.txt" ||
  fail "--split-by rank: the missing ranks are not said"

"$GPUPERF" export "$bad" --format parquet -o "$dir/ds" > /dev/null 2> "$dir/export.err" ||
  fail "export failed: $(cat "$dir/export.err")"
[[ -f $dir/ds/_gpuperf.json ]] || fail "no dataset written"
grep -q "rank 2 is claimed by 2 processes" "$dir/export.err" ||
  fail "export: the rank claimed twice is not said: $(cat "$dir/export.err")"
finish
