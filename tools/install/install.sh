#!/usr/bin/env bash
# install.sh - installs liboppacked into a prefix:
#   PREFIX/include/oppacked.h
#   PREFIX/lib/liboppacked.a          (link with -lcudart -lm)
#   PREFIX/lib/liboppacked.so.0       (soname; the CUDA runtime is linked in)
#   PREFIX/lib/liboppacked.so -> liboppacked.so.0
#   PREFIX/lib/pkgconfig/oppacked.pc  (Libs: -L... -loppacked -L<cuda>/lib64 -lcudart -lm)
#
#   bazel run //:install -- --prefix DIR [--cuda-libdir DIR]
#
# A relative --prefix is taken from the directory bazel run was called in.
# --cuda-libdir defaults to $CUDA_HOME/lib64 (CUDA_HOME: /usr/local/cuda).
# The files come from this script's Bazel runfiles (bazel run, or a test
# that depends on //:install).
set -euo pipefail

usage() {
    echo "usage: bazel run //:install -- --prefix DIR [--cuda-libdir DIR]" >&2
    exit 2
}

prefix=""
cuda_libdir="${CUDA_HOME:-/usr/local/cuda}/lib64"
while [ $# -gt 0 ]; do
    case "$1" in
    --prefix) [ $# -ge 2 ] || usage; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --cuda-libdir) [ $# -ge 2 ] || usage; cuda_libdir="$2"; shift 2 ;;
    --cuda-libdir=*) cuda_libdir="${1#--cuda-libdir=}"; shift ;;
    -h | --help) usage ;;
    *) echo "install: unknown argument '$1'" >&2; usage ;;
    esac
done
[ -n "$prefix" ] || usage
case "$prefix" in
/*) ;;
*) prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix" ;;
esac

# The workspace root inside the runfiles tree.
if [ -n "${RUNFILES_DIR:-}" ] && [ -d "$RUNFILES_DIR/oppacked" ]; then
    root="$RUNFILES_DIR/oppacked"
elif [ -n "${TEST_SRCDIR:-}" ] && [ -d "$TEST_SRCDIR/oppacked" ]; then
    root="$TEST_SRCDIR/oppacked"
elif [ -d "$0.runfiles/oppacked" ]; then
    root="$0.runfiles/oppacked"
else
    echo "install: cannot find the runfiles of //:install (run it with bazel run)" >&2
    exit 1
fi
for f in lib/oppacked.h liboppacked.a liboppacked.so tools/install/oppacked.pc.in; do
    [ -f "$root/$f" ] || { echo "install: missing $root/$f" >&2; exit 1; }
done

header="$root/lib/oppacked.h"
ver() { sed -n "s/^#define OPP_VERSION_$1 *\([0-9]*\).*/\1/p" "$header"; }
version="$(ver MAJOR).$(ver MINOR).$(ver PATCH)"
major="$(ver MAJOR)"

mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
install -m 644 "$header" "$prefix/include/oppacked.h"
install -m 644 "$root/liboppacked.a" "$prefix/lib/liboppacked.a"
install -m 755 "$root/liboppacked.so" "$prefix/lib/liboppacked.so.$major"
ln -sfn "liboppacked.so.$major" "$prefix/lib/liboppacked.so"
sed -e "s|@PREFIX@|$prefix|" -e "s|@CUDA_LIBDIR@|$cuda_libdir|" -e "s|@VERSION@|$version|" \
    "$root/tools/install/oppacked.pc.in" >"$prefix/lib/pkgconfig/oppacked.pc"
chmod 644 "$prefix/lib/pkgconfig/oppacked.pc"

echo "install: liboppacked $version -> $prefix"
echo "  $prefix/include/oppacked.h"
echo "  $prefix/lib/liboppacked.a"
echo "  $prefix/lib/liboppacked.so -> liboppacked.so.$major"
echo "  $prefix/lib/pkgconfig/oppacked.pc"
echo "build against it: PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs oppacked"
