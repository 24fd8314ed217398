#!/usr/bin/env bash
# Installs the independent readers that check gpuperf's Parquet export
# (tests/e2e/parquet_export_test.sh): DuckDB's Node.js package, a SQL engine, and hyparquet, a
# Parquet reader in plain JavaScript, at the versions tests/sql/package-lock.json pins, with
# npm into BUILD_DIR/sql-engines. Kept there: a rebuild installs again only when the lock file
# changed. Without Node.js and npm, or without a way to the npm registry, it installs nothing
# and says so in one line (the test then skips, saying why); any other failure is an error.
# Usage: scripts/install-sql-engines.sh [BUILD_DIR]   (default: $GPUPERF_BUILD_DIR, else build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${GPUPERF_BUILD_DIR:-build}}
dest=$build/sql-engines
# The lock file of the last complete install: written only once npm succeeded.
stamp=$dest/installed.lock.json
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-sql-engines: no node/npm: the Parquet export's reader check will be skipped"
  exit 0
fi
if [[ -d $dest/node_modules ]] && cmp -s tests/sql/package-lock.json "$stamp"; then
  echo "install-sql-engines: up to date in $dest"
  exit 0
fi
mkdir -p "$dest"
rm -f "$stamp" "$dest/unreachable"
cp tests/sql/package.json tests/sql/package-lock.json "$dest/"
if ! npm ci --prefix "$dest" --no-audit --no-fund --loglevel=error > "$dest/npm.log" 2>&1; then
  # The codes of Node.js's network errors: no DNS, no route, refused, timed out.
  if grep -Eq 'ENOTFOUND|EAI_AGAIN|ENETUNREACH|ECONNREFUSED|ETIMEDOUT|ECONNRESET' "$dest/npm.log"; then
    echo "npm registry unreachable ($(grep -Eo 'E[A-Z_]{4,}' "$dest/npm.log" | head -1))" > "$dest/unreachable"
    echo "install-sql-engines: the npm registry cannot be reached: the Parquet export's reader check will be skipped"
    exit 0
  fi
  cat "$dest/npm.log" >&2
  echo "install-sql-engines: npm ci failed (above)" >&2
  exit 1
fi
cp tests/sql/package-lock.json "$stamp"
echo "install-sql-engines: installed in $dest"
