#!/usr/bin/env bash
# record's summary and report say the same about what was lost (issue 29), on every fixture
# under tests/data (each recording, and each trace file alone) and on damaged copies: cut
# short, a damaged chunk, a header without chunks, an empty file beside a good one. Both read
# the same facts (analyze/data_loss.h); before, the summary said "lost nothing" for all of
# these while report showed the damage. Every other e2e test runs the same check on the
# recordings it makes (lib.sh, finish).
source "$(dirname "$0")/lib.sh"
[[ -x $SUMMARY_OF ]] || { echo "skip: no gpuperf_record_summary in this build"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

checked=0
while IFS= read -r path; do
  check_loss_agrees "$path"
  checked=$((checked + 1))
done < <({ find "$SRC/tests/data" -name '*.gpt' -printf '%h\n' | sort -u
           find "$SRC/tests/data" -name '*.gpt' | sort; })
[[ $checked -ge 20 ]] || fail "only $checked fixtures found under tests/data"

good=$SRC/tests/data/h100/mock_transformer/mock_transformer.525.gpt
# damage NAME: a copy of $good in $dir/NAME/, damaged as NAME says.
damage() {
  mkdir -p "$dir/$1"
  local out=$dir/$1/trace.gpt
  case $1 in
    truncated) head -c $(( $(stat -c %s "$good") - 100 )) "$good" > "$out" ;;
    header_only) head -c 16 "$good" > "$out" ;;
    beside_empty) cp "$good" "$out"; : > "$dir/$1/empty.gpt" ;;
    corrupt_chunk)  # one payload byte of the third chunk flipped: its checksum fails
      python3 - "$good" "$out" <<'PY'
import struct, sys
data = bytearray(open(sys.argv[1], "rb").read())
pos = 16
for _ in range(2):
    pos += 24 + struct.unpack_from("<I", data, pos + 8)[0]
data[pos + 24 + 3] ^= 0xFF
open(sys.argv[2], "wb").write(data)
PY
      ;;
  esac
}
declare -A names=([truncated]=bytes_truncated [header_only]=files_without_chunks
                  [beside_empty]=files_skipped [corrupt_chunk]=chunks_corrupt)
for damaged in truncated header_only beside_empty corrupt_chunk; do
  damage "$damaged"
  check_loss_agrees "$dir/$damaged"
  summary=$("$SUMMARY_OF" "$dir/$damaged" 2>&1)
  [[ $summary == *"[${names[$damaged]}]"* ]] ||
    fail "$damaged: the summary does not name ${names[$damaged]}: $summary"
  [[ $summary != *"lost      nothing"* ]] || fail "$damaged: the summary says it lost nothing"
done

finish
