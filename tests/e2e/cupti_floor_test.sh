#!/usr/bin/env bash
# The CUPTI floor tracer against a fake libcupti (tests/e2e/cupti_floor/fake_cupti.cc):
# InitializeInjection enables CONCURRENT_KERNEL only, the exit handler forces a flush, only
# kernel records are counted, dropped records are added up, and the one line is printed.
# Skips (77) without cupti.h, g++ or python3.
source "$(dirname "$0")/lib.sh"
CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
if [[ ! -f $CUDA_ROOT/include/cupti.h ]] || ! command -v g++ >/dev/null || ! command -v python3 >/dev/null; then
  echo "skip: needs $CUDA_ROOT/include/cupti.h, g++ and python3"
  exit 77
fi

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$SRC/bench/cupti_floor/build.sh" "$dir/floor" >/dev/null || fail "build.sh failed"
mkdir -p "$dir/fake"
g++ -std=c++17 -shared -fPIC -I"$CUDA_ROOT/include" -Wl,-soname,libcupti.so.13 \
  -o "$dir/fake/libcupti.so.13" "$SRC/tests/e2e/cupti_floor/fake_cupti.cc" || fail "fake build failed"

lib=$dir/floor/libcupti_floor.so
readelf -d "$lib" | grep -q 'RUNPATH.*\$ORIGIN' || fail "RUNPATH lacks \$ORIGIN"
readelf -d "$lib" | grep -q "RUNPATH.*$CUDA_ROOT/lib64" || fail "RUNPATH lacks $CUDA_ROOT/lib64"
[[ $(nm -D --defined-only "$lib" | awk '{print $3}') == "InitializeInjection" ]] ||
  fail "the library should export InitializeInjection only"

# What the CUDA driver does: load the library, call InitializeInjection once; then exit.
err=$(LD_LIBRARY_PATH=$dir/fake python3 -c "
import ctypes, sys
lib = ctypes.CDLL('$lib')
print('init', lib.InitializeInjection(), lib.InitializeInjection(), file=sys.stderr)
" 2>&1)
[[ $err == *"init 1 1"* ]] || fail "InitializeInjection did not return 1: $err"
[[ $(grep -c 'fake-cupti: enable' <<<"$err") -eq 1 && $err == *"enable kind=10"* ]] ||
  fail "should enable CONCURRENT_KERNEL (10) only, once: $err"
[[ $err == *"flush flag=1"* ]] || fail "no forced flush at exit: $err"
[[ $err == *"buffer size=8388608 aligned=1"* ]] || fail "buffers should be 8 MiB, aligned: $err"
[[ $(grep -c '^cupti-floor:' <<<"$err") -eq 1 ]] || fail "want exactly one report line: $err"
[[ $err == *"cupti-floor: kernels=5 dropped=2"* ]] || fail "wrong counts: $err"

finish
