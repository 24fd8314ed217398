#!/usr/bin/env bash
# Builds libcupti_floor.so (the minimal kernel-only CUPTI tracer) and libcupti_probe.so (the
# floor plus one CUPTI feature at a time, see cupti_probe.cc) into OUTDIR.
# usage: bench/cupti_floor/build.sh OUTDIR     env: CUDA_ROOT (default /usr/local/cuda), CXX
set -euo pipefail
if [[ $# -ne 1 || $1 == -* ]]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
out=$1
src=$(cd "$(dirname "$0")" && pwd)
CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
CXX=${CXX:-g++}
cupti_dir=""
for dir in "$CUDA_ROOT/lib64" "$CUDA_ROOT/extras/CUPTI/lib64"; do
  if compgen -G "$dir/libcupti.so*" >/dev/null; then
    cupti_dir=$dir
    break
  fi
done
if [[ -z $cupti_dir || ! -f $CUDA_ROOT/include/cupti.h ]]; then
  echo "build.sh: CUPTI not found under $CUDA_ROOT (lib64 or extras/CUPTI/lib64)" >&2
  exit 1
fi
mkdir -p "$out"
# RUNPATH: both places CUDA installs libcupti, then the library's own directory.
# libstdc++ is linked in statically so the library loads into any process (PyTorch included).
repo=$(cd "$src/../.." && pwd)
# The probe measures gpuperf's own stack walkers, so it compiles them in (with frame records,
# as the injection library does).
extra_cupti_floor=()
extra_cupti_probe=("$repo/src/unwind/unwinder.cc" -I"$repo/src" -fno-omit-frame-pointer)
for name in cupti_floor cupti_probe; do
  extra_var="extra_$name[@]"
  "$CXX" -std=c++20 -O2 -g -fPIC -shared -fvisibility=hidden -Wall -Wextra -Wno-unused-parameter \
    -I"$CUDA_ROOT/include" -o "$out/lib$name.so" "$src/$name.cc" "${!extra_var}" \
    -L"$cupti_dir" -lcupti -ldl -static-libstdc++ -static-libgcc \
    -Wl,--enable-new-dtags,-rpath,"$CUDA_ROOT/lib64:$CUDA_ROOT/extras/CUPTI/lib64:\$ORIGIN" \
    -Wl,--no-undefined
done
echo "built $out/libcupti_floor.so $out/libcupti_probe.so"
