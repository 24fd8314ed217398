#!/bin/bash
# CUPTI's own finalize, without gpuperf: the PyTorch loop under glibc's malloc checks with
# tests/gpu/cupti_cycle.c preloaded, variants side by side (docs/attach.md "Detaching").
o=${OUT:-/tmp}/cycle; mkdir -p $o
cuda=${CUDA_HOME:-/usr/local/cuda}
gcc -shared -fPIC -O1 -I$cuda/include -o $o/cycle.so tests/gpu/cupti_cycle.c \
  -L$cuda/lib64 -L$cuda/extras/CUPTI/lib64 -lcupti -lpthread -Wl,-rpath,$cuda/lib64 || exit 1
dbg=/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
variant() {
  local v=$1; shift
  env "$@" LD_PRELOAD=$o/cycle.so:$dbg GLIBC_TUNABLES=glibc.malloc.check=3:glibc.malloc.perturb=165 \
    python3 -X faulthandler tests/gpu/attach_loop.py $o/steps.$v $o/stop.$v 45 > $o/py.$v.out 2> $o/py.$v.err
  echo "$v: exit=$? cycles=$(grep -c 'cycle: .* done' $o/py.$v.err) last='$(grep 'cycle:' $o/py.$v.err | tail -1)' $(grep -m1 -E 'malloc|Fatal|corrupt' $o/py.$v.err)"
}
if [[ $# -eq 0 ]]; then
  set -- fin1: fin2: nofin:CYCLE_FINALIZE=0 fin_noact:CYCLE_ACTIVITY=0
fi
# NAME:VAR=VALUE,VAR=VALUE ...
for spec in "$@"; do
  name=${spec%%:*}; vars=${spec#*:}
  IFS=, read -r -a settings <<< "$vars"
  variant "$name" CYCLE_START_S=12 "${settings[@]}" > $o/$name.txt &
done
wait
cat $o/*.txt
