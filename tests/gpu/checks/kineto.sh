# GPU check "kineto" (sourced by tests/gpu/run.sh): torch.profiler inside `gpuperf record`, with
# libgpuperf_preload.so (src/preload) in the program's LD_PRELOAD, on real CUPTI and PyTorch:
#   1. default: Kineto is refused CUPTI (gpuperf holds it); gpuperf's own line says so exactly
#      once, cupti_clients_refused >= 1 is in the trace, record's summary has its warning line,
#      torch.profiler got 0 CUDA events, and gpuperf recorded as many kernels as in run 2;
#   2. GPUPERF_PRELOAD=off: no gpuperf line, no count, the same kernels (> 0);
#   3. --no-stacks --activities kernel,memcpy,memset: gpuperf does not subscribe, Kineto is not
#      refused: no refusal line; Kineto's buffer registration takes CUPTI's records from
#      gpuperf, which the preload library sees: the takeover line once, activity_buffers_taken 1.
# Takes three short PyTorch runs. Outputs in $out/kineto/.
kineto_check() {
  local d=$out/kineto w=$work/kineto problems=()
  local program=$src/tests/gpu/torch_profiler_inside.py
  local line="was refused CUPTI's callbacks, which gpuperf holds"
  mkdir -p "$d" "$w"
  [[ -f $bin/libgpuperf_preload.so ]] || problems+=("libgpuperf_preload.so is not beside gpuperf")
  timeout 300 "$gp" record -o "$w/on" --force -- python3 "$program" > "$d/on.out" 2> "$d/on.err"
  local rc_on=$?
  GPUPERF_PRELOAD=off timeout 300 "$gp" record -o "$w/off" --force -- python3 "$program" \
    > "$d/off.out" 2> "$d/off.err"
  local rc_off=$?
  timeout 300 "$gp" record --no-stacks --activities kernel,memcpy,memset -o "$w/nostacks" \
    --force -- python3 "$program" > "$d/nostacks.out" 2> "$d/nostacks.err"
  local rc_nostacks=$?
  kineto_kernels() { sed -n 's/^  kernels *\([0-9,]*\).*/\1/p' "$d/$1.err" | tr -d ,; }
  kineto_events() { sed -n 's/.*torch_profiler_cuda_events=\([0-9]*\).*/\1/p' "$d/$1.out"; }
  kineto_said() { grep -c -- "$line" "$d/$1.err"; }
  local refused; refused=$(trace_stat "$w/on" cupti_clients_refused)
  [[ $("$gp" dump "$w/off" 2>/dev/null | grep -c '# cupti_clients_refused$') -gt 0 ]] &&
    problems+=("off: cupti_clients_refused counted")
  local on_kernels off_kernels; on_kernels=$(kineto_kernels on); off_kernels=$(kineto_kernels off)
  {
    echo "== kineto: exits $rc_on/$rc_off/$rc_nostacks; lines $(kineto_said on)/$(kineto_said off)/$(kineto_said nostacks);" \
      "kernels $on_kernels/$off_kernels/$(kineto_kernels nostacks); torch.profiler CUDA events" \
      "$(kineto_events on)/$(kineto_events off)/$(kineto_events nostacks); cupti_clients_refused ${refused:-none}"
    grep -hE "^gpuperf|^  warning|CUPTI" "$d/on.err" | head -8 | sed 's/^/   on: /'
  } | tee -a "$results"
  [[ $rc_on -eq 0 && $rc_off -eq 0 && $rc_nostacks -eq 0 ]] ||
    problems+=("exits $rc_on/$rc_off/$rc_nostacks")
  [[ $(kineto_said on) -eq 1 ]] || problems+=("gpuperf's line came $(kineto_said on) times, want 1")
  grep -qE "^gpuperf\[[0-9]+\]: another CUPTI client .*$line" "$d/on.err" ||
    problems+=("the line lacks gpuperf's prefix")
  [[ ${refused:-0} -ge 1 ]] || problems+=("cupti_clients_refused not in the trace")
  grep -q "^  warning   .* refused CUPTI, which gpuperf held" "$d/on.err" ||
    problems+=("record's summary has no warning line")
  [[ $(kineto_events on) == 0 ]] || problems+=("torch.profiler got '$(kineto_events on)' CUDA events: the design changed")
  [[ ${on_kernels:-0} -gt 0 && $on_kernels == "$off_kernels" ]] ||
    problems+=("kernels with the preload ${on_kernels:-none}, without ${off_kernels:-none}")
  [[ $(kineto_said off) -eq 0 ]] || problems+=("the line came with GPUPERF_PRELOAD=off")
  [[ $(kineto_said nostacks) -eq 0 ]] || problems+=("the line came without gpuperf's subscription")
  local taken; taken=$(grep -c "replaced gpuperf's activity buffers" "$d/nostacks.err")
  [[ $taken -eq 1 ]] || problems+=("nostacks: the takeover line came $taken times, want 1")
  [[ $("$gp" dump "$w/nostacks" 2>/dev/null | grep -c 'value=1 # activity_buffers_taken$') -gt 0 ]] ||
    problems+=("nostacks: activity_buffers_taken not 1")
  note kineto "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-one line, ${refused} refused, ${on_kernels} kernels with and without the preload}"
}
