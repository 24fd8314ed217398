# Signals on the GPU (docs/recording.md, "Signals"): launch_bound (2 threads, launching for
# 30 s) ended after about 3 s by
#   timeout    `timeout -s TERM 3 gpuperf record` (timeout signals record and its group);
#   group      `kill -TERM -- -PGID` of a setsid'd record;
#   HUP, QUIT, SEGV, PIPE   the signal sent to the program itself.
# Each time the trace must end with the final flush ("lost nothing", "after gpuperf wrote all
# its records"), record exit 128+N, and no live page be left.
signals_check() {
  local live=$work/signals-live problems=() kept=()
  mkdir -p "$live"
  # signals_run NAME SIGNAL PREFIX...: records launch_bound, signalled as NAME says.
  signals_run() {
    local name=$1 signal=$2
    shift 2
    local dir=$work/rec/signals-$name log=$work/signals-$name.err
    echo "== signals: $name ($signal)" | tee -a "$results"
    # (A background job of a script starts with SIGINT and SIGQUIT ignored: not this one.)
    GPUPERF_LIVE_DIR=$live "$@" env --default-signal "$gp" record -o "$dir" --force -- \
      "$ex/launch_bound" --seconds 30 --threads 2 > "$work/signals-$name.out" 2> "$log" &
    local job=$! record_pid="" app=""
    for _ in $(seq 100); do
      record_pid=$(pgrep -f "^$gp record -o $dir" | head -1)
      [[ -n $record_pid ]] && app=$(pgrep -P "$record_pid" | head -1)
      [[ -n $app ]] && break
      sleep 0.1
    done
    sleep 3
    case $name in
      timeout) ;;  # timeout's own timer
      group) kill -"$signal" -- "-$(ps -o pgid= -p "$record_pid" | tr -d ' ')" ;;
      *) [[ -n $app ]] && kill -"$signal" "$app" ;;
    esac
    wait "$job"
    local rc=$? want=$((128 + $(kill -l "$signal")))
    [[ -n $app ]] || problems+=("$name: never saw the program")
    [[ $rc -eq $want ]] || problems+=("$name: exit $rc, want $want")
    grep -q "after gpuperf wrote all its records" "$log" || problems+=("$name: no final flush")
    grep -q "lost      nothing" "$log" || problems+=("$name: $(grep -m1 LOST "$log")")
    local recorded; recorded=$(sed -n 's/^  kernels *\([0-9,]*\).*/\1/p' "$log" | tr -d ,)
    [[ ${recorded:-0} -gt 0 ]] || problems+=("$name: nothing recorded")
    [[ -z $(ls -A "$live") ]] && kept+=("$name ${recorded:-0}") || problems+=("$name: live page left")
    rm -f "$live"/*
    grep -E "^gpuperf: |^  " "$log" | sed 's/^/   /' >> "$results"
  }
  signals_run timeout TERM timeout --preserve-status -s TERM 3
  signals_run group TERM setsid
  local signal
  for signal in HUP QUIT SEGV PIPE; do signals_run "$signal" "$signal"; done
  note signals "$([[ ${#problems[@]} -eq 0 ]] && echo PASS || echo FAIL)" \
    "${problems[*]:-every run ended with its final flush, nothing lost (kernels: ${kept[*]})}"
}
