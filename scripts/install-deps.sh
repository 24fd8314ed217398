#!/usr/bin/env bash
# Installs what gpuperf needs from Debian packages, only what is missing.
# Usage: scripts/install-deps.sh [--test]   (--test adds what the test suite needs)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make ninja-build pkg-config libzstd-dev zstd libdw-dev libelf-dev zlib1g-dev liblzma-dev
          libbz2-dev libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev libgmock-dev
          libbenchmark-dev libunwind8 clang-format clang libbpf-dev bpftool)
if [[ "${1:-}" == "--test" ]]; then
  # protoc decodes our Perfetto output; chromium checks the interactive flame graph;
  # llvm provides the symbolizer used as a test oracle; python3-dev builds the extension
  # that checks the Python frame walker against the real interpreter; prometheus scrapes
  # `gpuperf serve` and tmux is the terminal `gpuperf top` is tested in (docs/live.md);
  # golang-go brings `go tool pprof`, which reads our pprof export.
  packages+=(protobuf-compiler chromium python3 python3-dev llvm binutils prometheus tmux curl
             golang-go)
  # Node.js and npm run the independent readers of the Parquet export (DuckDB, hyparquet:
  # scripts/install-sql-engines.sh). A Node.js installed otherwise (its own npm inside) is
  # kept: Debian's npm package would conflict with it.
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then packages+=(nodejs npm); fi
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# The readers of the Parquet export, from the npm registry (scripts/install-sql-engines.sh).
sql_engines() {
  if [[ "${1:-}" == "--test" ]]; then scripts/install-sql-engines.sh; fi
}
if (( ${#missing[@]} == 0 )); then
  echo "install-deps: everything is installed"
  sql_engines "${1:-}"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
sql_engines "${1:-}"
