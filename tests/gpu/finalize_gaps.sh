#!/bin/bash
# Attached PyTorch loops under glibc's malloc checks, windows of 1 s again and again with
# GAP seconds between them, several loops side by side (docs/attach.md, "Detaching"):
#   bash tests/gpu/finalize_gaps.sh NAME:WINDOWS:GAP[:OPTIONS] ...
# (default a:15:0.5 b:15:0.5 c:6:5). OPTIONS are attach's, commas for spaces
# (d:15:0.5:--no-stacks,--activities,kernel). Each loop says how many windows it lived through
# and how it ended.
o=${OUT:-/tmp}/fingaps; mkdir -p $o
gp=.carry/bin/gpuperf
dbg=/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
one_loop() {
  local v=$1 windows=$2 gap=$3 i n=0 fails=0 opts=()
  [[ -n $4 ]] && IFS=, read -r -a opts <<< "$4"
  LD_PRELOAD=$dbg GLIBC_TUNABLES=glibc.malloc.check=3:glibc.malloc.perturb=165 \
    python3 -X faulthandler tests/gpu/attach_loop.py $o/steps.$v $o/stop.$v 300 >$o/py.$v.out 2>$o/py.$v.err & local j=$!
  until grep -q ready $o/py.$v.out 2>/dev/null || ! kill -0 $j 2>/dev/null; do sleep 0.2; done
  local p; p=$(sed -n 's/.*pid=\([0-9]*\).*/\1/p' $o/py.$v.out)
  for ((i = 1; i <= windows; i++)); do
    kill -0 $p 2>/dev/null || break
    $gp attach $p --duration 1s -o $o/r.$v.$i --force "${opts[@]}" >$o/a.$v.$i.log 2>&1 || fails=$((fails + 1))
    n=$i; sleep "$gap"
  done
  sleep 2; local alive; alive=$(kill -0 $p 2>/dev/null && echo alive || echo dead)
  touch $o/stop.$v; wait $j; local rc=$?
  echo "$v (gap $gap s, ${opts[*]}): windows=$n attach_failures=$fails after=$alive exit=$rc $(grep -m1 -E 'malloc|Fatal|free|corrupt' $o/py.$v.err) $(grep -h -o 'detached from.*' $o/a.$v.*.log | sort | uniq -c | tr '\n' ' ')"
}
for spec in ${*:-a:15:0.5 b:15:0.5 c:6:5}; do
  IFS=: read -r name windows gap options <<< "$spec"
  one_loop "$name" "$windows" "$gap" "$options" > "$o/$name.txt" 2>&1 &
done
wait
cat "$o"/*.txt
