#!/usr/bin/env bash
# install_consumer_test.sh - installs liboppacked with //:install into a
# fresh prefix and builds and runs examples/consumer.c against the installed
# tree through pkg-config and examples/Makefile, as a user would. Checks:
# the installed files, the pkg-config flags (-I, -L<cuda>/lib64, -lcudart,
# -lm), that liboppacked.so exports exactly the functions oppacked.h
# declares (no internal opp__*, no CUDA runtime symbol) and needs no
# libcudart.so, and that both consumers (shared and static) print OK.
# Usage (from Bazel): install_consumer_test.sh <install script> <consumer.c> <Makefile>
set -euo pipefail

install_script="$1"
consumer_c="$2"
makefile="$3"
work="${TEST_TMPDIR:-$(mktemp -d)}/install_consumer"
prefix="$work/prefix"
rm -rf "$work"
mkdir -p "$work/src"

fail() {
    echo "FAILED: $*" >&2
    exit 1
}

"$install_script" --prefix "$prefix"
for f in include/oppacked.h lib/liboppacked.a lib/liboppacked.so lib/liboppacked.so.0 \
    lib/pkgconfig/oppacked.pc; do
    [ -e "$prefix/$f" ] || fail "not installed: $f"
done
[ -L "$prefix/lib/liboppacked.so" ] || fail "lib/liboppacked.so is not a symlink to the soname"

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
flags="$(pkg-config --cflags --libs oppacked)"
echo "pkg-config --cflags --libs oppacked: $flags"
for want in "-I$prefix/include" "-L$prefix/lib" "-loppacked" "-L/usr/local/cuda/lib64" "-lcudart" "-lm"; do
    case " $flags " in
    *" $want "*) ;;
    *) fail "pkg-config flags lack $want" ;;
    esac
done

so="$prefix/lib/liboppacked.so.0"
soname="$(readelf -d "$so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')"
[ "$soname" = "liboppacked.so.0" ] || fail "soname is '$soname'"
if readelf -d "$so" | grep 'NEEDED.*libcudart'; then
    fail "liboppacked.so needs libcudart.so (the static runtime should be inside)"
fi
exports="$(nm -D --defined-only "$so")"
others="$(echo "$exports" | awk '$2 ~ /^[TDBR]$/ {print $3}' | grep -v '^opp_[^_]' || true)"
[ -z "$others" ] || fail "liboppacked.so exports symbols outside the public opp_* API: $(echo "$others" | head -5)"
# Exactly the functions the installed header declares (names followed by "(").
exported="$(echo "$exports" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort -u)"
declared="$(grep -oE '\bopp_[a-z0-9_]+ *\(' "$prefix/include/oppacked.h" | sed 's/ *($//' | sort -u)"
[ "$exported" = "$declared" ] ||
    fail "exports differ from oppacked.h: $(diff <(echo "$exported") <(echo "$declared") | grep '^[<>]' | head -5)"
echo "liboppacked.so exports the $(echo "$exported" | wc -l) functions of oppacked.h"

cp "$consumer_c" "$makefile" "$work/src/"
make -C "$work/src" all
out_shared="$("$work/src/consumer")" || fail "consumer (shared) failed: $out_shared"
echo "$out_shared"
out_static="$("$work/src/consumer_static")" || fail "consumer_static failed: $out_static"
echo "$out_static"
ldd "$work/src/consumer" | grep "$prefix/lib/liboppacked.so.0" ||
    fail "consumer does not load the installed liboppacked.so.0"
if ldd "$work/src/consumer_static" | grep liboppacked; then
    fail "consumer_static loads liboppacked.so"
fi
[ "$(echo "$out_shared" | tail -n 1)" = "consumer: OK" ] || fail "consumer did not print OK"
[ "$(echo "$out_static" | tail -n 1)" = "consumer: OK" ] || fail "consumer_static did not print OK"
echo "PASSED: install + pkg-config + consumer (shared and static)"
