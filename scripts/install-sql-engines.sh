#!/usr/bin/env bash
# Installs the independent readers that check gpuperf's Parquet export
# (tests/e2e/parquet_export_test.sh): DuckDB's Node.js package, a SQL engine, and hyparquet, a
# Parquet reader in plain JavaScript, at the versions tests/sql/package-lock.json pins, with
# npm into BUILD_DIR/sql-engines. Without Node.js and npm it installs nothing (the test then
# skips).
# Usage: scripts/install-sql-engines.sh [BUILD_DIR]   (default: $GPUPERF_BUILD_DIR, else build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${GPUPERF_BUILD_DIR:-build}}
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-sql-engines: no node/npm: the Parquet export's reader check will be skipped"
  exit 0
fi
dest=$build/sql-engines
if [[ -d $dest/node_modules ]] && cmp -s tests/sql/package-lock.json "$dest/package-lock.json"; then
  echo "install-sql-engines: up to date in $dest"
  exit 0
fi
mkdir -p "$dest"
cp tests/sql/package.json tests/sql/package-lock.json "$dest/"
npm ci --prefix "$dest" --no-audit --no-fund --loglevel=error
echo "install-sql-engines: installed in $dest"
