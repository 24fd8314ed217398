#!/bin/bash
# Run from the repository root on the GPU machine with .carry staged (scripts/stage-gpu.sh).
# Result on the H200 (2026-11-28): finalize: the loop segfaulted after 2 windows; nofinalize:
# 15 windows, the loop alive and exit 0: cuptiFinalize from the window thread is the crash.
# After the fix (cupti/detach.h: finalized from a callback at an API exit): run with
# FINALIZE_AB_VARIANTS=finalize, the loop must be alive after 15 windows and exit 0.
# A/B: PyTorch loop attached 15 times for 1 s, with cuptiFinalize real vs stubbed (LD_PRELOAD shim)
o=${OUT:-/tmp}/finab; mkdir -p $o
gp=.carry/bin/gpuperf
printf '#include <unistd.h>\nint cuptiFinalize(void){static const char m[]="nofin: skipped\\n";(void)!write(2,m,sizeof m-1);return 0;}\n' > $o/nofin.c
gcc -shared -fPIC -o $o/nofin.so $o/nofin.c
dbg=/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
for v in ${FINALIZE_AB_VARIANTS:-finalize nofinalize}; do
  pre=$dbg; [[ $v == nofinalize ]] && pre=$o/nofin.so:$dbg
  LD_PRELOAD=$pre GLIBC_TUNABLES=glibc.malloc.check=3:glibc.malloc.perturb=165 \
    python3 -X faulthandler tests/gpu/attach_loop.py $o/steps.$v $o/stop.$v 300 >$o/py.$v.out 2>$o/py.$v.err & j=$!
  until grep -q ready $o/py.$v.out 2>/dev/null || ! kill -0 $j 2>/dev/null; do sleep 0.2; done
  p=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' $o/py.$v.out); n=0; fails=0
  for i in $(seq 15); do
    kill -0 $p 2>/dev/null || break
    $gp attach $p --duration 1s -o $o/r.$v.$i --force >$o/a.$v.$i.log 2>&1 || fails=$((fails+1))
    n=$i; sleep 0.5
  done
  sleep 2; alive=$(kill -0 $p 2>/dev/null && echo alive || echo dead)
  touch $o/stop.$v; wait $j; rc=$?
  echo "$v: windows=$n attach_failures=$fails after=$alive exit=$rc skipped=$(grep -c nofin: $o/py.$v.err) $(grep -m1 -E 'malloc|Fatal|free' $o/py.$v.err)"
done
