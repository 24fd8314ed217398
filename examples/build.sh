#!/usr/bin/env bash
# Builds every example with plain nvcc into OUTDIR, no CMake needed (the GPU test carries the
# binaries built here). Checks afterwards that the shared-cudart builds need libcudart.so.13
# and the static ones do not.
#
# usage: examples/build.sh OUTDIR
#   env: NVCC (default $CUDA_ROOT/bin/nvcc), CUDA_ROOT (default /usr/local/cuda),
#        CUDA_ARCHS (default "90": sm_90 code plus compute_90 PTX), JOBS (default 2)
set -euo pipefail

if [[ $# -ne 1 || $1 == -* ]]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
out=$1
src=$(cd "$(dirname "$0")" && pwd)
CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_ROOT/bin/nvcc}
CUDA_ARCHS=${CUDA_ARCHS:-90}
JOBS=${JOBS:-2}
if [[ ! -x $NVCC ]]; then
  echo "build.sh: nvcc not found at $NVCC (set NVCC or CUDA_ROOT)" >&2
  exit 1
fi
mkdir -p "$out"

# Host code keeps frame pointers and debug info, so profilers can unwind and name it.
flags=(-std=c++17 -O2 -g -lineinfo -Xcompiler -fno-omit-frame-pointer
       -Xlinker "-rpath,$CUDA_ROOT/lib64")
for arch in $CUDA_ARCHS; do
  flags+=(-gencode "arch=compute_$arch,code=sm_$arch" -gencode "arch=compute_$arch,code=compute_$arch")
done
driver_libs=(-L"$CUDA_ROOT/lib64/stubs" -lcuda)

# name  source  cudart  extra link flags
targets=(
  "vector_add|vector_add.cu|shared|"
  "vector_add_static|vector_add.cu|static|"
  "launch_bound|launch_bound.cu|shared|"
  "mock_transformer|mock_transformer.cu|shared|"
  "mock_transformer_static|mock_transformer.cu|static|"
  "multi_stream|multi_stream.cu|shared|"
  "cuda_graph|cuda_graph.cu|shared|"
  "memcpy_kinds|memcpy_kinds.cu|shared|"
  "driver_launch|driver_launch.cu|shared|${driver_libs[*]}"
  "hw_bound|hw_bound.cu|shared|"
  "power_pair|power_pair.cu|shared|"
)
if [[ -f $CUDA_ROOT/include/cublas_v2.h ]] && compgen -G "$CUDA_ROOT/lib64/libcublas.so*" >/dev/null; then
  targets+=("cublas_gemm|cublas_gemm.cu|shared|-lcublas")
else
  echo "build.sh: cuBLAS not found under $CUDA_ROOT: skipping cublas_gemm" >&2
fi

build_one() {
  local name=$1 source=$2 cudart=$3 libs=$4
  local defs=()
  [[ $cudart == static ]] && defs=(-DEXAMPLE_STATIC_CUDART)
  # shellcheck disable=SC2086  # libs is a list of flags
  if ! "$NVCC" "${flags[@]}" "${defs[@]}" -cudart "$cudart" -o "$out/$name" "$src/$source" $libs \
      2>"$out/$name.log"; then
    echo "build.sh: $name failed:" >&2
    cat "$out/$name.log" >&2
    return 1
  fi
  rm -f "$out/$name.log"
  echo "built $out/$name"
}

# Builds run JOBS at a time; a failed one leaves its log behind, which is how failures are
# found afterwards (exit statuses of background jobs are easy to lose).
rm -f "$out"/*.log
names=()
for target in "${targets[@]}"; do
  IFS='|' read -r name source cudart libs <<<"$target"
  while [[ $(jobs -rp | wc -l) -ge $JOBS ]]; do sleep 0.2; done
  build_one "$name" "$source" "$cudart" "$libs" &
  names+=("$name")
done
wait
if compgen -G "$out/*.log" >/dev/null; then
  echo "build.sh: some examples failed to build" >&2
  exit 1
fi

# The Python examples travel with the binaries.
cp "$src/pytorch_transformer.py" "$src/pytorch_ddp.py" "$out/"

# Shared builds must need libcudart.so.13; static ones must not.
if command -v readelf >/dev/null; then
  for target in "${targets[@]}"; do
    IFS='|' read -r name _ cudart _ <<<"$target"
    needs=$(readelf -d "$out/$name" | grep -c 'NEEDED.*libcudart\.so' || true)
    if [[ $cudart == shared && $needs -eq 0 ]]; then
      echo "build.sh: $name should need libcudart.so but does not" >&2
      exit 1
    fi
    if [[ $cudart == static && $needs -ne 0 ]]; then
      echo "build.sh: $name should not need libcudart.so but does" >&2
      exit 1
    fi
  done
fi
echo "build.sh: ${#names[@]} examples in $out"
