#!/usr/bin/env bash
# Errors name the real cause, before anything runs: a script whose #! interpreter is missing
# (exec says "No such file or directory", of the script), an ELF program whose dynamic loader
# is missing, a directory as the command, a file without execute permission, an --inject-lib
# that is not gpuperf's library (another tool's, any system library, a text file, another
# architecture), and a --pid the trace does not hold.
source "$(dirname "$0")/lib.sh"

dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
bin=$GPUPERF_BINARY_DIR
lib=$bin/src/inject/libgpuperf_inject.so

# Runs gpuperf, checks the exit code and that stderr is exactly one line, `want`.
expect_only_line() {
  local want_exit=$1 want=$2; shift 2
  timeout 20 "$GPUPERF" "$@" >/dev/null 2>stderr.txt </dev/null
  local code=$? lines first
  lines=$(wc -l < stderr.txt)
  first=$(head -n 1 stderr.txt)
  [[ $code -eq $want_exit && $lines -eq 1 && $first == "$want" ]] ||
    fail "gpuperf $*: exit $code (want $want_exit), $lines line(s):
$(cat stderr.txt)
    want: $want"
}

# Writes byte VALUE at OFFSET of FILE.
poke() { printf "$(printf '\\%03o' "$3")" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null; }

# --- the command ---------------------------------------------------------------------------
# A script whose interpreter is missing: the interpreter is named, not the script.
printf '#!/no/such/interp -x\necho ran > ran.txt\n' > script && chmod +x script
expect_only_line 126 "gpuperf: error: interpreter /no/such/interp of ./script not found" \
  record -o rec -- ./script
printf '#!/no/such/interp\n' > "$dir/on-path" && chmod +x "$dir/on-path"
PATH=$dir:$PATH expect_only_line 126 "gpuperf: error: interpreter /no/such/interp of on-path not found" \
  record -o rec -- on-path
[[ ! -e ran.txt && ! -e rec ]] || fail "the script ran, or an output directory was made"
# A script with a working interpreter still runs (and one with "#!" alone goes to /bin/sh).
printf '#!/bin/sh\necho ran > ran.txt\n' > good-script && chmod +x good-script
[[ -f $lib ]] && {
  "$GPUPERF" record -q -o rec --inject-lib "$lib" -- ./good-script 2>/dev/null </dev/null
  [[ -f ran.txt ]] || fail "a script with an existing interpreter did not run"
}
# An ELF program whose dynamic loader is missing: the loader is named.
interp=$(readelf -l /bin/true 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
if [[ -n $interp ]]; then
  cp /bin/true prog
  at=$(grep -obUa -- "$interp" prog | head -1 | cut -d: -f1)
  poke prog $((at + ${#interp} - 1)) 57  # the last character becomes '9'
  missing=${interp%?}9
  [[ -e $missing ]] && fail "$missing exists: pick another name"
  expect_only_line 126 "gpuperf: error: interpreter $missing of ./prog not found" record -o rec -- ./prog
else
  echo "no readelf: the missing dynamic loader case not run"
fi
# A directory; a file without execute permission; nothing at all.
mkdir adir
expect_only_line 126 "gpuperf: error: ./adir is a directory, not a program" record -o rec -- ./adir
printf '#!/bin/sh\n' > noexec && chmod 644 noexec
expect_only_line 126 "gpuperf: error: ./noexec is not executable (not a file with execute permission)" \
  record -o rec -- ./noexec
expect_only_line 127 "gpuperf: error: command not found: no-such-command-gpuperf" \
  record -o rec -- no-such-command-gpuperf
# A program behind a directory we may not search is there, but out of reach (as another user).
if [[ $(id -u) -eq 0 ]] && command -v setpriv >/dev/null &&
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$GPUPERF" --version >/dev/null 2>&1; then
  mkdir -p locked/in && cp /bin/true locked/in/prog && chmod 755 "$dir" && chmod 700 locked
  setpriv --reuid=nobody --regid=nogroup --clear-groups "$GPUPERF" record -o /tmp/gp-never -- \
    "$dir/locked/in/prog" >/dev/null 2>stderr.txt </dev/null
  code=$?
  want="gpuperf: error: cannot reach $dir/locked/in/prog: permission denied on a directory of its path"
  [[ $code -eq 126 && $(head -1 stderr.txt) == "$want" ]] ||
    fail "behind a locked directory: exit $code: $(cat stderr.txt)"
else
  echo "not root (or nobody cannot run this build): the locked directory case not run"
fi

# --- --inject-lib ---------------------------------------------------------------------------
# Checked before the program runs: the program must not run unrecorded.
run_marker=(sh -c 'echo ran > ran.txt')
rm -f ran.txt
expect_inject_refused() {
  local library=$1 want=$2
  expect_only_line 2 "gpuperf: error: --inject-lib $library $want" \
    record -o rec --inject-lib "$library" -- "${run_marker[@]}"
  [[ ! -e ran.txt ]] || fail "the program ran with --inject-lib $library"
  rm -f ran.txt
}
system_lib=$(ldconfig -p 2>/dev/null | sed -n 's/.*libz\.so\.1 (libc6,x86-64) => //p' | head -1)
[[ -n $system_lib ]] || system_lib=$(ldd /bin/sh | sed -n 's/.*libc\.so\.6 => \(\S*\).*/\1/p')
if [[ $(uname -m) == x86_64 && -n $system_lib ]]; then
  expect_inject_refused "$system_lib" \
    "is not gpuperf's injection library: it exports no InitializeInjection (pass the libgpuperf_inject.so built with this gpuperf)"
  # Another architecture (e_machine 183, aarch64), and a 32-bit x86 library (ELFCLASS32,
  # e_machine 3), hand-made from the same file.
  cp "$system_lib" arm.so && poke arm.so 18 183 && poke arm.so 19 0
  expect_inject_refused ./arm.so "is built for aarch64, not for x86-64"
  cp "$system_lib" x86.so && poke x86.so 4 1 && poke x86.so 18 3 && poke x86.so 19 0
  expect_inject_refused ./x86.so "is built for x86 (32-bit), not for x86-64"
  for real32 in /usr/lib32/libc.so.6 /usr/lib/i386-linux-gnu/libc.so.6; do
    [[ -f $real32 ]] && expect_inject_refused "$real32" "is built for x86 (32-bit), not for x86-64"
  done
else
  echo "not x86-64, or no system library found: those --inject-lib cases not run"
fi
echo "not a library" > text.so
expect_inject_refused ./text.so "is not a shared library (not an ELF file)"
: > empty.so
expect_inject_refused ./empty.so "is not a shared library (not an ELF file)"
expect_inject_refused "$dir" "is a directory, not a library"
expect_only_line 3 "gpuperf: error: --inject-lib ./missing.so: no such file" \
  record -o rec --inject-lib ./missing.so -- true
# Another CUDA tool's injection library: it has the entry point, not ours.
other=$bin/tests/fakes/libfake_test_subscriber.so
if [[ -f $other ]]; then
  expect_inject_refused "$other" \
    "is another CUDA tool's injection library, not gpuperf's (it exports no gpuperf_launch_marker)"
fi
# The same checks for GPUPERF_INJECT_LIB, and for `gpuperf metrics`.
GPUPERF_INJECT_LIB=$dir/text.so expect_only_line 2 \
  "gpuperf: error: GPUPERF_INJECT_LIB=$dir/text.so is not a shared library (not an ELF file)" \
  record -o rec -- "${run_marker[@]}"
expect_only_line 2 "gpuperf: error: --inject-lib ./text.so is not a shared library (not an ELF file)" \
  metrics -o rec --inject-lib ./text.so -- "${run_marker[@]}"
[[ ! -e ran.txt ]] || fail "the program ran with a foreign injection library"
# Ours is taken.
if [[ -f $lib ]]; then
  "$GPUPERF" record -q -o rec --inject-lib "$lib" -- "${run_marker[@]}" 2>stderr.txt </dev/null
  [[ -f ran.txt ]] || fail "gpuperf's own library was refused: $(cat stderr.txt)"
fi

# --- --pid of the commands that read a trace -----------------------------------------------
"$SYNTH" -o one.gpt --kernels 20 --pid 4242 >/dev/null || fail "synth failed"
mkdir run && cp one.gpt run/a.gpt && "$SYNTH" -o run/b.gpt --kernels 20 --pid 77 >/dev/null
for command in report flamegraph source; do
  args=("$command" one.gpt --pid 999)
  [[ $command == flamegraph ]] && args+=(-o flame.svg)
  expect_only_line 2 "gpuperf: error: --pid 999: one.gpt holds no process 999 (its process: 4242)" \
    "${args[@]}"
done
expect_only_line 2 "gpuperf: error: --pid 5: run holds no process 5 (its processes: 77, 4242)" \
  report run --pid 5
[[ ! -e flame.svg ]] || fail "flamegraph wrote a graph of a pid the trace does not hold"
# A pid that is there still works.
expect_exit 0 "$GPUPERF" report run --pid 77
kernels=$("$GPUPERF" report run --pid 77 --format csv --sections kernels | tail -n +2 | wc -l)
[[ $kernels -gt 0 ]] || fail "report --pid 77 shows no kernel"

finish
