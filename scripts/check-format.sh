#!/usr/bin/env bash
# Fails if any C/C++ source differs from .clang-format. Fix with: scripts/check-format.sh --fix
set -euo pipefail
cd "$(dirname "$0")/.."
CF=$(command -v clang-format || command -v clang-format-14)
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.cc' '*.h' '*.cu' '*.cpp' \
                     | grep -v -E '(^|/)(generated|third_party)/|\.skel\.h$|vmlinux\.h$' \
                     | while read -r f; do [[ -f $f ]] && echo "$f"; done)
if [[ "${1:-}" == "--fix" ]]; then
  "$CF" -i "${files[@]}"
  exit 0
fi
if ! "$CF" --dry-run --Werror "${files[@]}" 2>/tmp/gpuperf-format.log; then
  grep -E "^[^ ].*(error|warning)" /tmp/gpuperf-format.log | cut -d: -f1 | sort -u | sed 's/^/  needs formatting: /'
  echo "check-format: run scripts/check-format.sh --fix" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
