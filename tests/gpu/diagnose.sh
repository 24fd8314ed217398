#!/usr/bin/env bash
# Bisects a crash of a program under the injection library by configuration, and takes
# a backtrace with cuda-gdb (the GPU image has no gdb). Usage: diagnose.sh BIN_DIR PROGRAM
set -uo pipefail
bin=$(cd "${1:?}" && pwd); prog=${2:?}
lib=$bin/libgpuperf_inject.so
run() {
  local name=$1; shift
  rm -rf /tmp/diag; mkdir -p /tmp/diag
  env GPUPERF_OUTPUT_DIR=/tmp/diag CUDA_INJECTION64_PATH=$lib "$@" "$prog" >/tmp/diag.out 2>&1
  echo "== $name: exit $? | $(tail -c 300 /tmp/diag.out | tr '\n' ' ')"
}
run "no stacks, no nvtx" GPUPERF_STACKS=0
run "stacks, no nvtx" GPUPERF_STACKS=1
run "no stacks, nvtx" GPUPERF_STACKS=0 NVTX_INJECTION64_PATH=$lib
run "stacks + nvtx" GPUPERF_STACKS=1 NVTX_INJECTION64_PATH=$lib
run "activities kernel only, stacks" GPUPERF_STACKS=1 GPUPERF_ACTIVITIES=kernel
echo "== backtrace (stacks + nvtx)"
env GPUPERF_OUTPUT_DIR=/tmp/diag CUDA_INJECTION64_PATH=$lib NVTX_INJECTION64_PATH=$lib \
  cuda-gdb -q -batch -ex run -ex bt -ex "info sharedlibrary" --args "$prog" 2>&1 | grep -v "^\[New Thread\|^\[Thread" | tail -45
