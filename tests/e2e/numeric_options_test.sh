#!/usr/bin/env bash
# Every option that takes a number, duration, size, count or percentage, and every GPUPERF_*
# number the injection library reads: one grammar for all (base/quantity.h). Forms people type
# (an exponent, a space before the unit) are taken; nan, inf, a negative, an overflow and junk
# are refused with exit 2 and one line that says what is accepted, never clamped or wrapped.
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
"$SYNTH" -o good.gpt --kernels 100 >/dev/null || fail "synth failed"
"$GPUPERF" report good.gpt --json -o base.json || fail "report --json failed"
lib=$GPUPERF_BINARY_DIR/src/inject/libgpuperf_inject.so
have_lib=0
[[ -f $lib ]] && have_lib=1

# The command line that gives OPTION the VALUE, for each command.
args_for() {
  local command=$1 option=$2 value=$3
  case $command in
    record) args=(record -o "$dir/rec" "$option" "$value" -- true) ;;
    report) args=(report good.gpt "$option" "$value") ;;
    flamegraph) args=(flamegraph good.gpt -o flame.svg "$option" "$value") ;;
    source) args=(source good.gpt "$option" "$value") ;;
    diff) args=(diff base.json good.gpt "$option" "$value") ;;
    top) args=(top --once --no-nvml --dir "$dir/no-live" "$option" "$value") ;;
    serve) args=(serve --listen 127.0.0.1:bad "$option" "$value") ;;
    metrics) args=(metrics "$option" "$value" -- true) ;;
    dump-now) [[ $option == pid ]] && args=(dump-now "$value") || args=(dump-now 1 "$option" "$value") ;;
  esac
}

# Runs the command (bounded) and checks its exit code and the first line of its stderr.
expect_line() {
  local want_exit=$1 want=$2; shift 2
  local got_exit first
  timeout 20 "$GPUPERF" "$@" >/dev/null 2>stderr.txt </dev/null
  got_exit=$?
  first=$(head -n 1 stderr.txt)
  [[ $got_exit -eq $want_exit ]] || fail "exit $got_exit (want $want_exit): gpuperf $*: $first"
  [[ $first == "$want" ]] || fail "gpuperf $*
    said: $first
    want: $want"
}

# One row per option: the command, the option, what "not a number" says (the forms it takes)
# and what "out of range" says (its range), after `OPTION: "VALUE" `; then the help to see.
# An option whose overflow means "all" (--top) has "all" as its range message. Durations that
# need a unit get one in the out-of-range values ("-1s"): "-1" alone needs a unit first.
options='
record|--delay|is not a duration; use e.g. 2.5, 500ms, 1.5s, 2m|is out of range; use 0 to 1000000h
record|--duration|is not a duration; use e.g. 2.5, 500ms, 1.5s, 2m|is out of range; use 0 to 1000000h
record|--flush-period|is not a duration; use e.g. 200 (ms), 500ms, 1.5s, 2m|is out of range; use 10ms to 10m
record|--flight|is not a duration; use e.g. 2.5, 500ms, 1.5s, 2m|is out of range; use 100ms to 24h
record|--buffer-size|is not a size; use e.g. 64 (KiB), 512KiB, 1.5GiB|is out of range; use 64KiB to 1GiB
record|--max-memory|is not a size; use e.g. 64 (MiB), 512KiB, 1.5GiB|is out of range; use 4MiB to 64GiB
record|--flight-memory|is not a size; use e.g. 64 (MiB), 512KiB, 1.5GiB|is out of range; use 1MiB to 1TiB
record|--stack-depth|is not a whole number; use 1 to 256|is out of range; use 1 to 256
record|--power-hz|is not a whole number; use 0 to 1000|is out of range; use 0 to 1000
record|--freq|is not a whole number; use 1 to 10000|is out of range; use 1 to 10000
record|--pc-period|is not a whole number; use 5 to 31|is out of range; use 5 to 31
record|--sample-launches|is not a whole number; use 1 to 1000000 (e.g. 100/s)|is out of range; use 1 to 1000000 (e.g. 100/s)
report|--top|is not a whole number; use 0 or more (0: all)|all
report|--pid|is not a whole number; use 1 to 4294967295|is out of range; use 1 to 4294967295
report|--device|is not a whole number; use 0 to 4294967295|is out of range; use 0 to 4294967295
report|--stream|is not a whole number; use 0 to 4294967295|is out of range; use 0 to 4294967295
report|--from|is not a duration; use e.g. 500us, 1.5ms, 2s, 2m|is out of range; use 0 to 1000000h
report|--to|is not a duration; use e.g. 500us, 1.5ms, 2s, 2m|is out of range; use 0 to 1000000h
report|--gap-threshold|is not a duration; use e.g. 500us, 1.5ms, 2s, 2m|is out of range; use 0 to 1000000h
flamegraph|--pid|is not a whole number; use 1 to 4294967295|is out of range; use 1 to 4294967295
flamegraph|--tid|is not a whole number; use 1 to 4294967295|is out of range; use 1 to 4294967295
flamegraph|--min-width|is not a percentage; use 0 to 50 (e.g. 0.5 or 0.5%)|is out of range; use 0 to 50
source|--context|is not a whole number; use 0 to 1000|is out of range; use 0 to 1000
source|--pid|is not a whole number; use 1 to 4294967295|is out of range; use 1 to 4294967295
diff|--top|is not a whole number; use 0 or more (0: all)|all
diff|--min-time|is not a duration; use e.g. 500us, 1.5ms, 2s, 2m|is out of range; use 0 to 1000000h
top|--pid|is not a whole number; use 1 to 4294967295|is out of range; use 1 to 4294967295
top|--interval|is not a duration; use e.g. 2.5, 500ms, 1.5s, 2m|is out of range; use 100ms to 1h
serve|--top-kernels|is not a whole number; use 0 to 64|is out of range; use 0 to 64
dump-now|pid|is not a whole number; use 1 to 4294967295|is out of range; use 1 to 4294967295
dump-now|--timeout|is not a duration; use e.g. 2.5, 500ms, 1.5s, 2m|is out of range; use 1ms to 24h
'

while IFS='|' read -r command option not_one range; do
  [[ -n $command ]] || continue
  suffix=" (see 'gpuperf $command --help')"
  for value in nan inf 12abc 0x10 '' '5 5' 1e 2s5; do
    [[ -z $value && $option == pid ]] && continue  # CLI11: a positional needs a value
    args_for "$command" "$option" "$value"
    expect_line 2 "gpuperf: error: $option: \"$value\" $not_one$suffix" "${args[@]}"
  done
  unit=""
  [[ $not_one == *"use e.g. 500us"* ]] && unit=s
  for value in -1 1e999 99999999999999999999999; do
    value=$value$unit
    args_for "$command" "$option" "$value"
    if [[ $range == all ]]; then
      [[ $value == -1 ]] &&
        expect_line 2 "gpuperf: error: $option: \"$value\" is out of range; use 0 or more (0: all)$suffix" "${args[@]}"
      [[ $value != -1 ]] && expect_exit 0 "$GPUPERF" "${args[@]}"  # more rows than there are: all
      continue
    fi
    expect_line 2 "gpuperf: error: $option: \"$value\" $range$suffix" "${args[@]}"
  done
done <<< "$options"

# A duration option names what it takes: "--from 5" could mean seconds or nanoseconds.
expect_line 2 "gpuperf: error: --from: \"5\" needs a unit; use e.g. 500us, 1.5ms, 2s, 2m (see 'gpuperf report --help')" \
  report good.gpt --from 5
# metrics --ranges window:DURATION
expect_line 2 'gpuperf: error: --ranges window: "nan" is not a duration; use e.g. 500us, 1.5ms, 2s, 2m' \
  metrics --ranges window:nan -- true
expect_line 2 'gpuperf: error: --ranges window: "1e30s" is out of range; use 1ms to 24h' \
  metrics --ranges window:1e30s -- true
# A signal number past the last signal is no signal, whatever it is modulo 2^32.
expect_line 2 'gpuperf: error: --flight-signal 4294967308: not a signal (e.g. USR2, USR1, RTMIN+2, a number, or none)' \
  record --flight 10s --flight-signal 4294967308 -- true

# Good values in every form reach the program as the injection library's variable says them.
# option|value|variable|its value (what record passes on)
accepted='
--delay|2.5e-1s|GPUPERF_DELAY_MS|250
--delay|1e3|GPUPERF_DELAY_MS|1000000
--delay|1.5 s|GPUPERF_DELAY_MS|1500
--delay|2m|GPUPERF_DELAY_MS|120000
--delay|0.1ms|GPUPERF_DELAY_MS|1
--duration|10 ms|GPUPERF_DURATION_MS|10
--duration|1000000h|GPUPERF_DURATION_MS|3600000000000
--flush-period|250|GPUPERF_FLUSH_PERIOD_MS|250
--flush-period|2.5e2 ms|GPUPERF_FLUSH_PERIOD_MS|250
--flush-period|1s|GPUPERF_FLUSH_PERIOD_MS|1000
--buffer-size|1e3|GPUPERF_BUFFER_KB|1000
--buffer-size|4 MiB|GPUPERF_BUFFER_KB|4096
--max-memory|64 MiB|GPUPERF_MAX_MEMORY_MB|64
--max-memory|1.5GiB|GPUPERF_MAX_MEMORY_MB|1536
--max-memory|1e2|GPUPERF_MAX_MEMORY_MB|100
--stack-depth|1e2|GPUPERF_STACK_DEPTH|100
--power-hz|5e1|GPUPERF_POWER_HZ|50
--pc-period|1.0e1|GPUPERF_PC_PERIOD|10
'
if [[ $have_lib -eq 1 ]]; then
  while IFS='|' read -r option value variable want; do
    [[ -n $option ]] || continue
    extra=()
    [[ $option == --pc-period ]] && extra=(--pc-sampling)
    got=$("$GPUPERF" record -q -o "$dir/rec" "${extra[@]}" "$option" "$value" -- \
      sh -c "echo \"\$$variable\"" 2>stderr.txt </dev/null)
    code=$?
    [[ $code -eq 0 && $got == "$want" ]] ||
      fail "record $option '$value': exit $code, $variable='$got' (want '$want'): $(head -1 stderr.txt)"
  done <<< "$accepted"
  got=$("$GPUPERF" record -q -o "$dir/rec" --flight 1e1 --flight-memory "64 MiB" \
    --sample-launches 1e2/s -- sh -c 'echo "$GPUPERF_FLIGHT_MS $GPUPERF_FLIGHT_MEMORY_MB $GPUPERF_SAMPLE_LAUNCHES"' \
    2>/dev/null </dev/null)
  [[ $got == "10000 64 100" ]] || fail "--flight 1e1 --flight-memory '64 MiB' --sample-launches 1e2/s gave '$got'"
else
  echo "no injection library in this build: record's accepted forms not run"
fi

# The other commands take the same forms.
expect_exit 0 "$GPUPERF" report good.gpt --top 1e1 --from "1e-3 s" --to "1 s" --gap-threshold "2.5 ms"
expect_exit 0 "$GPUPERF" diff base.json good.gpt --top 1e1 --min-time "1e3 ns"
expect_exit 0 "$GPUPERF" flamegraph good.gpt -o flame.svg --min-width 5e-1% --pid 4.242e3
# A huge --top is every row, not an allocation or a wrap to a few rows.
all=$("$GPUPERF" report good.gpt --format csv --sections kernels --top 0 | wc -l)
for huge in 4294967297 99999999999999999999999 1e30; do
  rows=$("$GPUPERF" report good.gpt --format csv --sections kernels --top "$huge" | wc -l)
  [[ $rows -eq $all ]] || fail "--top $huge shows $rows lines, --top 0 shows $all"
done
ten=$("$GPUPERF" report good.gpt --top 1e1 | grep -c 'synth_kernel_')
[[ $ten -le 10 ]] || fail "--top 1e1 shows $ten kernels"

# GPUPERF_* variables set by hand: the injection library reads them with the same parsers. A
# bad one is ignored with one line (the program runs and is recorded as usual); a good one in
# any form is taken without a word.
# variable|bad value|what the line says after "ignoring a bad setting: "
variables='
GPUPERF_BUFFER_KB|-1|GPUPERF_BUFFER_KB: "-1" is out of range; use 64KiB to 1GiB
GPUPERF_MAX_MEMORY_MB|17592186044416|GPUPERF_MAX_MEMORY_MB: "17592186044416" is out of range; use 4MiB to 64GiB
GPUPERF_FLUSH_PERIOD_MS|nan|GPUPERF_FLUSH_PERIOD_MS: "nan" is not a duration; use e.g. 200 (ms), 500ms, 1.5s, 2m
GPUPERF_CUPTI_FLUSH_MS|inf|GPUPERF_CUPTI_FLUSH_MS: "inf" is not a duration; use e.g. 200 (ms), 500ms, 1.5s, 2m
GPUPERF_STACK_DEPTH|1000|GPUPERF_STACK_DEPTH: "1000" is out of range; use 1 to 256
GPUPERF_POWER_HZ|1e9|GPUPERF_POWER_HZ: "1e9" is out of range; use 0 to 1000
GPUPERF_DELAY_MS|1e30|GPUPERF_DELAY_MS: "1e30" is out of range; use 0 to 1000000h
GPUPERF_DURATION_MS|12abc|GPUPERF_DURATION_MS: "12abc" is not a duration; use e.g. 200 (ms), 500ms, 1.5s, 2m
GPUPERF_FLIGHT_MS|-5|GPUPERF_FLIGHT_MS: "-5" is out of range; use 0 to 24h
GPUPERF_FLIGHT_MEMORY_MB|99999999999999999999999|GPUPERF_FLIGHT_MEMORY_MB: "99999999999999999999999" is out of range; use 1MiB to 1TiB
GPUPERF_FLIGHT_SIGNAL|4294967308|GPUPERF_FLIGHT_SIGNAL: "4294967308" is out of range; use 0 to 64
GPUPERF_SAMPLE_LAUNCHES|0x10|GPUPERF_SAMPLE_LAUNCHES: "0x10" is not a whole number; use 0 to 1000000 (e.g. 100/s)
GPUPERF_PC_PERIOD|2.5|GPUPERF_PC_PERIOD: "2.5" is not a whole number; use 5 to 31
GPUPERF_CUBIN_CAP_MB|-nan|GPUPERF_CUBIN_CAP_MB: "-nan" is not a size; use e.g. 64 (MiB), 512KiB, 1.5GiB
GPUPERF_METRICS_RANGES|window:1e30|GPUPERF_METRICS_RANGES window: "1e30" is out of range; use 1ms to 24h
'
good_values='GPUPERF_BUFFER_KB=1 MiB|GPUPERF_MAX_MEMORY_MB=2e2|GPUPERF_FLUSH_PERIOD_MS=2.5e2 ms|GPUPERF_CUPTI_FLUSH_MS=0|GPUPERF_STACK_DEPTH=1e2|GPUPERF_POWER_HZ=0|GPUPERF_DELAY_MS=0 s|GPUPERF_SAMPLE_LAUNCHES=1e3/s|GPUPERF_CUBIN_CAP_MB=1.5 GiB'
app=$GPUPERF_BINARY_DIR/tests/fakes/fake_cuda_app
if [[ $have_lib -eq 1 && -x $app ]]; then
  while IFS='|' read -r variable value want; do
    [[ -n $variable ]] || continue
    rm -rf "$dir/env"
    env "$variable=$value" "$GPUPERF" record -o "$dir/env" --inject-lib "$lib" -- "$app" basic \
      >/dev/null 2>stderr.txt </dev/null
    code=$?
    lines=$(grep -c 'ignoring a bad setting' stderr.txt)
    line=$(grep 'ignoring a bad setting' stderr.txt | sed 's/^gpuperf\[[0-9]*\]: ignoring a bad setting: //')
    [[ $code -eq 0 && $lines -eq 1 && $line == "$want" ]] ||
      fail "$variable=$value: exit $code, $lines line(s): '$line' (want '$want')"
    kernels=$("$GPUPERF" dump "$dir/env" 2>/dev/null | grep -c '^kernel ')
    [[ $kernels -eq 5 ]] || fail "$variable=$value: the program was not recorded ($kernels kernels)"
  done <<< "$variables"
  IFS='|' read -r -a good <<< "$good_values"
  rm -rf "$dir/env"
  env "${good[@]}" "$GPUPERF" record -o "$dir/env" --inject-lib "$lib" -- "$app" basic \
    >/dev/null 2>stderr.txt </dev/null
  code=$?
  ! grep -q 'ignoring a bad setting' stderr.txt && [[ $code -eq 0 ]] ||
    fail "good GPUPERF_* values refused (exit $code): $(grep 'bad setting' stderr.txt)"
else
  echo "no injection library or fake app in this build: GPUPERF_* variables not run"
fi

finish
