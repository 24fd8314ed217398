# GPU check "hwconflict" (sourced by tests/gpu/run.sh): the conflicts over the GPU's counters
# that issue 13 asks to detect, on a real driver, for `gpuperf metrics`:
#   1. an unprivileged user (nobody): where the driver restricts counters to admin users
#      (NVreg_RestrictProfilingToAdminUsers=1, the default), one line that says so and how to
#      fix it, and the recording goes on; where it does not, the values are measured;
#   2. two processes profiling the same GPU at once (as DCGM's profiling module or another
#      profiler would hold the counters): the second either measures too or says in one line
#      that the counters are busy; neither crashes, and both programs finish.
# Results in $out/hwconflict/.
hwconflict_check() {
  local d=$out/hwconflict w=$work/hwconflict problems=()
  mkdir -p "$d" "$w"
  chmod 777 "$w"
  local hw=$ex/hw_bound
  [[ -x $hw ]] || { note hwconflict FAIL "examples/hw_bound not built"; return; }
  grep -hE 'RmProfilingAdminOnly|RestrictProfiling' /proc/driver/nvidia/params > "$d/driver_params.txt" 2>&1

  # 1. As nobody (the tools and the example must be readable by it).
  chmod -R a+rX "$bin" "$ex" 2>/dev/null
  timeout 120 su nobody -s /bin/bash -c \
    "'$gp' metrics --kernel copy -o '$w/nobody' -- '$hw' --kernel copy --repeat 2" \
    > "$d/nobody.out" 2> "$d/nobody.err"
  local rc=$?
  echo "== hwconflict: as nobody, exit $rc; $(cat "$d/driver_params.txt")" | tee -a "$results"
  grep -E 'gpuperf' "$d/nobody.err" | head -5 | sed 's/^/   /' | tee -a "$results"
  if grep -q 'restricted to admin users' "$d/nobody.err"; then
    [[ $(grep -c 'restricted to admin users' "$d/nobody.err") -eq 1 ]] ||
      problems+=("the privileges line came more than once")
    grep -q 'hw_bound: kernel=copy' "$d/nobody.out" || problems+=("the program did not finish as nobody")
  elif grep -q 'copy_kernel' "$d/nobody.out"; then
    echo "   counters are open to every user on this driver: measured as nobody" | tee -a "$results"
  else
    problems+=("as nobody: neither values nor the privileges line (exit $rc)")
  fi

  # 2. Two profiling processes on one GPU: the first long enough to overlap the second.
  "$gp" metrics -o "$w/first" --force -- "$hw" --repeat 12 > "$d/first.out" 2> "$d/first.err" &
  local first=$!
  sleep 3
  timeout 120 "$gp" metrics -o "$w/second" --force -- "$hw" --kernel copy --repeat 2 \
    > "$d/second.out" 2> "$d/second.err"
  local second_rc=$?
  wait "$first"
  local first_rc=$?
  echo "== hwconflict: two at once, exits $first_rc and $second_rc" | tee -a "$results"
  grep -hE '^gpuperf' "$d/first.err" "$d/second.err" | sort | uniq -c | head -8 | sed 's/^/   /' |
    tee -a "$results"
  grep -q 'hw_bound: kernel=copy' "$d/first.out" || problems+=("the first program did not finish")
  grep -q 'hw_bound: kernel=copy' "$d/second.out" || problems+=("the second program did not finish")
  if grep -q 'counters' "$d/second.err" && grep -qi 'busy\|another' "$d/second.err"; then
    echo "   the second run said the counters were busy" | tee -a "$results"
  elif grep -q 'copy_kernel' "$d/second.out"; then
    echo "   both runs measured (the driver let two processes profile at once)" | tee -a "$results"
  else
    problems+=("second run: neither values nor a busy line (exit $second_rc)")
  fi
  if [[ ${#problems[@]} -eq 0 ]]; then
    note hwconflict PASS "as nobody and two at once: see hwconflict/"
  else
    note hwconflict FAIL "${problems[*]}"
  fi
}
