#!/usr/bin/env bash
# First contact with a GPU machine: facts about it, then one small recording.
# Usage (on the GPU machine): tests/gpu/smoke.sh BIN_DIR   (gpuperf + libgpuperf_inject.so)
set -uo pipefail
bin=$(cd "${1:?BIN_DIR}" && pwd)
out=${OUT:-/tmp/gpuperf-smoke}
mkdir -p "$out"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -1
  uname -r; ldd --version | head -1
  ls -l /usr/local/cuda/lib64/libcupti.so* /usr/local/cuda/extras/CUPTI/lib64/libcupti.so* 2>&1 | head -4
  ldconfig -p | grep -E "libunwind.so.8|libzstd.so.1|libdw.so" || echo "no libunwind/libzstd/libdw in ldconfig"
  python3 -c "import torch,os;print('torch',torch.__version__, torch.cuda.is_available()); import glob; print(glob.glob(os.path.dirname(torch.__file__)+'/../nvidia/*/lib/libcupti*'))" 2>&1 | tail -2
  ldd "$bin/libgpuperf_inject.so"; ldd "$bin/gpuperf" | head
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
nvcc -O2 -g -lineinfo -arch=sm_90 -o /tmp/smoke tests/gpu/smoke.cu || exit 1
time "$bin/gpuperf" record -o "$out/rec" --force -v --save-buffers "$out" -- /tmp/smoke
echo "record exit: $?"
"$bin/gpuperf" dump "$out/rec" > "$out/dump.txt"; echo "dump exit: $?"
grep -c '^kernel ' "$out/dump.txt"; grep -c '^launch_link ' "$out/dump.txt"
grep -m3 -E '^(api|nvtx|memcpy|memset|device|stat) ' "$out/dump.txt"
grep '^stat ' "$out/dump.txt" | tail -25
ls -la "$out" "$out/rec"
