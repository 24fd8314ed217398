#!/usr/bin/env bash
# The Debian package (cmake/Install.cmake, docs/install.md): CPack builds it from this build
# tree; it holds the CLI, the guest and preload libraries and the docs where a distribution
# expects them and declares what they link; unpacked into a scratch root (dpkg -x, as a
# dpkg -i would place it under /), its own gpuperf records the fake CUDA app with its own
# injection library, found from bin/../lib/gpuperf, and reports it.
source "$(dirname "$0")/lib.sh"
use_fake_app
for tool in cpack dpkg-deb; do
  command -v $tool >/dev/null || { echo "skip: no $tool"; exit 77; }
done

cpack -G DEB --config "$GPUPERF_BINARY_DIR/CPackConfig.cmake" -B "$dir/pkg" > "$dir/cpack.log" 2>&1 ||
  { fail "cpack failed: $(tail -5 "$dir/cpack.log")"; finish; }
debs=("$dir"/pkg/gpuperf_*.deb)
[[ ${#debs[@]} -eq 1 && -f ${debs[0]} ]] || { fail "want one gpuperf_*.deb: $(ls "$dir/pkg")"; finish; }
deb=${debs[0]}

info=$(dpkg-deb -f "$deb" Package Architecture Depends)
grep -qx 'Package: gpuperf' <<< "$info" || fail "package name: $info"
grep -q '^Depends: .*libzstd1' <<< "$info" || fail "the guest library's libzstd is not declared: $info"
# Every library a packaged binary needs is either in the package or declared (libcupti
# comes with CUDA or PyTorch, the fake stands in for it here).
contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
for path in ./usr/bin/gpuperf ./usr/lib/gpuperf/libgpuperf_inject.so \
  ./usr/lib/gpuperf/libgpuperf_preload.so ./usr/share/doc/gpuperf/README.md \
  ./usr/share/doc/gpuperf/architecture.md; do
  grep -qxF "$path" <<< "$contents" || fail "the package lacks $path"
done

root=$dir/root
dpkg -x "$deb" "$root" || { fail "dpkg -x failed"; finish; }
gp=$root/usr/bin/gpuperf
for binary in "$gp" "$root"/usr/lib/gpuperf/*.so*; do
  missing=$(ldd "$binary" 2>/dev/null | grep 'not found' | grep -v 'libcupti' || true)
  [[ -z $missing ]] || fail "$binary needs what the system lacks: $missing"
done

# Recorded with the installed files alone: no --inject-lib, no GPUPERF_INJECT_LIB.
env -u GPUPERF_INJECT_LIB GPUPERF_LOG=verbose "$gp" record -o "$dir/rec" -- "$app" basic \
  > "$dir/rec.out" 2> "$dir/rec.err" || fail "installed record failed: $(tail -3 "$dir/rec.err")"
grep -q "^fake-app: pid=" "$dir/rec.out" || fail "the app did not run: $(cat "$dir/rec.out")"
want=$(sed -n 's/^fake-app: pid=.* kernels=\([0-9]*\) .*/\1/p' "$dir/rec.out")
got=$("$gp" dump "$dir/rec" 2>/dev/null | grep -c '^kernel ')
[[ -n $want && $got -eq $want ]] || fail "installed gpuperf recorded $got kernels, the app launched $want"
# The guest library in the recorded process was the package's.
"$gp" dump "$dir/rec" 2>/dev/null | grep '^module ' | grep -q "path=\"$root/usr/lib/gpuperf/libgpuperf_inject.so\"" ||
  fail "the recorded process did not load the packaged injection library: $("$gp" dump "$dir/rec" | grep '^module ' | grep -i gpuperf)"
"$gp" report "$dir/rec" > "$dir/report.txt" 2>&1 || fail "installed report failed: $(head -3 "$dir/report.txt")"
grep -q 'vecAdd' "$dir/report.txt" || fail "the report lacks the app's kernel: $(head -20 "$dir/report.txt")"

finish
